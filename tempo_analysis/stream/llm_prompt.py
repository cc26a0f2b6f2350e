"""Few-shot prompting of a causal LM as a stream baseline (paper: Llama2-7B-S / MistralInst2-7B-S).

`FewShotLLMClassifier` never trains. `fit` picks `shots` labelled training posts (seeded; the
class mix follows the training distribution, with at least one example per class), and every
post is classified by a prompt in the paper's stream-level style (appendix G, MistralInst2-7B-S):
a task description, the list of outputs, then `shots` examples, each its conversation history
(the window's earlier posts) and the post as ``Input: <<<post>>>`` with its ``Output: label``,
then the post to classify. With a chat template (the embedded SmolLM2-135M-Instruct has one)
the prompt is the user turn and the label the assistant's answer; otherwise it ends in
``Output:`` and the label follows after a space.

Instead of generating text and bucketing it into a class (the paper's post-processing), each
label is SCORED: the summed log-probability of its tokens after the prompt; `predict_proba` is
the softmax over labels. This is the same decision for a one-token answer and never yields an
unparseable output.

Calibration (`calibrate`; the paper uses none). A small LM often prefers one label whatever the
post says (the embedded 135M model answers the majority label for every LRS post). Two standard
corrections subtract a per-label bias b from the log-probabilities before the softmax:
- ``"content-free"`` (contextual calibration, Zhao et al. 2021, "Calibrate before use"): b is the
  label log-probabilities for the same prompt with no history and the post ``N/A``. One extra
  prompt; no label is read.
- ``"dev-mean"``: b is the mean label log-probability over the dev posts' prompts, so that on dev
  no label is favoured on average. It needs `fit(train, dev)`; the dev labels are not read.
The bias is learned in `fit` (``bias_``; zeros without calibration).

`llm`: "default" (embedded SmolLM2-135M-Instruct, offline), any Hugging Face causal LM name
(e.g. "mistralai/Mistral-7B-Instruct-v0.2" when online), a local folder, or a loaded
(model, tokenizer) pair.

Cost. Every prompt starts with the same task text and few-shot examples, so their keys and values
are computed once per `label_logprobs` call (the token prefix all sequences share, found on the
token ids, so a tokenizer that merges across the boundary only shortens it). Each prompt's own
part (the post's window) then runs once, and each label's tokens run after it. With 5 shots of
a 5-post window that part is a small share of the prompt. `prefix_cache=False` runs every
(prompt + label) sequence whole (the same log-probabilities, to float rounding).
"""

from __future__ import annotations

import copy
from dataclasses import KW_ONLY, dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from tempo_analysis.causal_lm import cache_keyword

from .labels import training_labels
from .embeddings import settings_repr

LRS_TASK = ("Given the most recent online conversation history between users around a rumourous claim on a "
            "newsworthy event, determine if the most recent input user post is a switch with respect to the "
            "overall conversation stance. Answer with \"no_switch\" for either the absence of a switch or cases "
            "where the numbers of supporting and opposing posts are equal and with \"switch\" for switch between "
            "the total number of oppositions (querying or denying) and supports or vice versa.")
GENERIC_TASK = ("Given the most recent online conversation history between users, determine the label of the "
                "most recent input user post.")
CALIBRATIONS = ("none", "content-free", "dev-mean")
CONTENT_FREE = "N/A"  # the content-free post of contextual calibration
SYSTEM = "You are a helpful, respectful and honest assistant for labeling online conversations between users."


def default_task(label_names) -> str:
    """The paper's LRS wording for switch labels, else a generic one."""
    return LRS_TASK if set(label_names) == {"switch", "no_switch"} else GENERIC_TASK


def _clip(text: str, max_chars: int) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= max_chars else text[: max_chars - 3] + "..."


def format_example(history, post, label=None, max_chars: int = 280) -> str:
    """One example: its history lines, the post as Input, and its label as Output (if given)."""
    lines = ["Conversation History:"] + [_clip(h, max_chars) for h in history] if len(history) else []
    lines.append(f"Input: <<<{_clip(post, max_chars)}>>>")
    if label is not None:
        lines.append(f"Output: {label}")
    return "\n".join(lines)


def build_prompt(task: str, label_names, examples, history, post, max_chars: int = 280) -> str:
    """The paper's stream-level prompt (MistralInst2-7B-S) up to, not including, the answer.

    examples: [(history list, post, label)]; history/post: the post to classify.
    """
    head = (f"{SYSTEM}\n{task} Your task is to assess and categorize post input after <<<>>> into one of the "
            "following predefined outputs:\n" + "\n".join(label_names) + "\nYou will only respond with the "
            "output. Do not include the word \"Output\". Do not provide explanations or notes.\n####\n"
            "Here are some examples:\n")
    shots = "\n\n".join(format_example(h, p, lab, max_chars) for h, p, lab in examples)
    return f"{head}{shots}\n####\n{format_example(history, post, None, max_chars)}"


def _right_padded(seqs, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[B, T] ids right-padded with `pad`, and the [B, T] attention mask."""
    T = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), T), pad, dtype=torch.long)
    am = torch.zeros((len(seqs), T), dtype=torch.long)
    for j, s in enumerate(seqs):
        ids[j, : len(s)] = torch.as_tensor(s)
        am[j, : len(s)] = 1
    return ids, am


def shared_prefix_length(seqs, limit: int) -> int:
    """Length of the token prefix that all `seqs` share, at most `limit`."""
    first, n = seqs[0], max(0, int(limit))
    for s in seqs[1:]:
        k = 0
        while k < n and s[k] == first[k]:
            k += 1
        n = k
        if n == 0:
            break
    return n


@dataclass(eq=False)
class FewShotLLMClassifier:
    """Few-shot prompted causal LM (no training); predict_proba = softmax of the labels' log-probabilities."""

    llm: object = "default"  # causal LM: "default", an HF name, a folder, or a (model, tokenizer) pair
    _: KW_ONLY
    window: int = 5  # posts per example, the post itself last (1 = post-level prompting)
    shots: int = 5  # examples in the prompt (paper: 5 or 10)
    task: str | None = None  # task description; None = the paper's LRS wording for switch labels
    max_post_chars: int = 280  # longer posts are cut (a tweet's length)
    batch_size: int = 4
    prefix_cache: bool = True  # compute the shared prompt prefix once (see the module docstring)
    calibrate: str = "none"  # "none" (paper), "content-free" or "dev-mean" (see the module docstring)
    seed: int = 0
    device: str = "auto"
    progress: bool = False

    __repr__ = settings_repr

    def __post_init__(self):
        self.window, self.shots = int(self.window), int(self.shots)
        if self.window < 1 or self.shots < 0:
            raise ValueError(f"window={self.window} must be >= 1 and shots={self.shots} >= 0")
        if self.calibrate not in CALIBRATIONS:
            raise ValueError(f"calibrate={self.calibrate!r} is not one of {', '.join(CALIBRATIONS)}. "
                             f"Fix: use 'none' (the paper), 'content-free' or 'dev-mean'.")

    def _load(self):
        if isinstance(self.llm, tuple):
            return self.llm
        from tempo_analysis.causal_lm import load_causal_lm

        return load_causal_lm(str(self.llm), device=None if self.device == "auto" else self.device)

    def _history(self, timelines, windows, i):
        texts = timelines.df["text"].to_numpy()
        rows = windows.post_index[i][windows.mask[i]]
        return [texts[r] for r in rows[:-1]], texts[rows[-1]]

    def fit(self, train, dev=None) -> "FewShotLLMClassifier":
        """Pick the few-shot examples from `train`, then the calibration bias (dev: its texts only)."""
        if self.calibrate == "dev-mean" and (dev is None or len(dev.df) == 0):
            raise ValueError("calibrate='dev-mean' needs dev posts: call fit(train, dev), or use "
                             "calibrate='content-free', which needs none")
        self.label_names_, codes = training_labels(train)
        rng = np.random.default_rng(self.seed)
        labelled = np.flatnonzero(codes >= 0)
        present = sorted(set(codes[labelled].tolist()))
        n = max(self.shots, len(present)) if self.shots else 0
        picked = [int(rng.choice(labelled[codes[labelled] == c])) for c in present] if n else []
        rest = np.setdiff1d(labelled, picked)
        picked += rng.choice(rest, size=min(n - len(picked), len(rest)), replace=False).tolist()
        order = rng.permutation(len(picked))
        w = train.windows(self.window)
        self.examples_ = [(*self._history(train, w, picked[j]), self.label_names_[codes[picked[j]]]) for j in order]
        self.task_ = self.task or default_task(self.label_names_)
        self.model_, self.tokenizer_ = self._load()
        self.bias_ = np.zeros(len(self.label_names_))
        if self.calibrate == "content-free":
            prompt = build_prompt(self.task_, self.label_names_, self.examples_, [], CONTENT_FREE,
                                  self.max_post_chars)
            self.bias_ = self.label_logprobs([prompt])[0]
        elif self.calibrate == "dev-mean":
            self.bias_ = self.label_logprobs(self._prompts(dev)).mean(0)
        return self

    def prompt_for(self, timelines, row: int) -> str:
        """The prompt text (before any chat template) for post `row` of timelines.df."""
        w = timelines.windows(self.window)
        history, post = self._history(timelines, w, int(row))
        return build_prompt(self.task_, self.label_names_, self.examples_, history, post, self.max_post_chars)

    def _encode(self, prompt: str) -> tuple[list[int], list[list[int]]]:
        """Token ids of the prompt and of each label's answer."""
        tok = self.tokenizer_
        if getattr(tok, "chat_template", None):
            ids = tok.apply_chat_template([{"role": "user", "content": prompt}], add_generation_prompt=True,
                                          tokenize=True)
            ids = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
            answers = [tok(lab, add_special_tokens=False)["input_ids"] for lab in self.label_names_]
        else:
            ids = tok(prompt + "\nOutput:", add_special_tokens=False)["input_ids"]
            answers = [tok(" " + lab, add_special_tokens=False)["input_ids"] for lab in self.label_names_]
        return list(ids), [list(a) for a in answers]

    @torch.no_grad()
    def label_logprobs(self, prompts) -> np.ndarray:
        """[len(prompts), n_labels] summed log-probabilities of each label's tokens after each prompt."""
        encoded = [self._encode(p) for p in prompts]
        if not encoded:
            return np.zeros((0, len(self.label_names_)))
        if self.prefix_cache:
            return self._logprobs_cached(encoded)
        return self._logprobs_whole(encoded)

    def _pad(self):
        return self.tokenizer_.pad_token_id if self.tokenizer_.pad_token_id is not None else 0

    def _logprobs_whole(self, encoded) -> np.ndarray:
        """Every (prompt + label) sequence run whole: the reference path."""
        seqs, spans = [], []
        for ids, answers in encoded:
            for a in answers:
                seqs.append(ids + a)
                spans.append((len(ids), len(a)))
        model = self.model_
        device = next(model.parameters()).device
        out = np.zeros(len(seqs), dtype=np.float64)
        step = max(1, self.batch_size * len(self.label_names_))
        for i in tqdm(range(0, len(seqs), step), desc="prompt", disable=not self.progress):
            chunk = seqs[i : i + step]
            ids, am = _right_padded(chunk, self._pad())
            logp = model(input_ids=ids.to(device), attention_mask=am.to(device)).logits.float().log_softmax(-1).cpu()
            for j, s in enumerate(chunk):
                start, n = spans[i + j]
                pos = torch.arange(start - 1, start + n - 1)
                out[i + j] = logp[j, pos, torch.as_tensor(s[start : start + n])].sum().item()
        return out.reshape(len(encoded), len(self.label_names_))

    def _logprobs_cached(self, encoded) -> np.ndarray:
        """The shared prefix once, each prompt's own tokens once, then each label's tokens after them.

        Prompts are batched in order of length (less padding). Per batch: a copy of the prefix cache runs the right-padded prompt tails (the
        first answer token is scored at each tail's last real position); then, for every label with
        more than one token, a copy of that cache runs the answer's other tokens at positions
        right after each prompt's real end (the pads between are masked out).
        """
        from transformers import DynamicCache

        model = self.model_
        kv = cache_keyword(model)
        device = next(model.parameters()).device
        prompts = [ids for ids, _ in encoded]
        answers = encoded[0][1]  # the labels' tokens do not depend on the prompt
        P = shared_prefix_length(prompts, min(map(len, prompts)) - 1)  # every tail keeps >= 1 token
        prefix = DynamicCache()
        if P > 0:
            model(input_ids=torch.as_tensor([prompts[0][:P]], device=device), **{kv: prefix}, use_cache=True)
        order = np.argsort([len(ids) for ids in prompts], kind="stable")  # similar lengths batch together
        out = np.zeros((len(prompts), len(answers)), dtype=np.float64)
        for i in tqdm(range(0, len(prompts), max(1, self.batch_size)), desc="prompt", disable=not self.progress):
            rows = order[i : i + self.batch_size]
            tails = [prompts[r][P:] for r in rows]
            B, lens = len(tails), torch.as_tensor([len(t) for t in tails])
            ids, am = _right_padded(tails, self._pad())
            T = ids.shape[1]
            am = torch.cat([torch.ones(B, P, dtype=torch.long), am], dim=1)
            cache = copy.deepcopy(prefix)
            if P > 0:
                cache.batch_repeat_interleave(B)
            logits = model(input_ids=ids.to(device), attention_mask=am.to(device), **{kv: cache},
                           use_cache=True, position_ids=(P + torch.arange(T)).expand(B, T).to(device)).logits
            last = logits[torch.arange(B), (lens - 1).to(device)].float().log_softmax(-1).cpu()  # [B, V]
            for k, ans in enumerate(answers):
                out[rows, k] = last[:, ans[0]].numpy()
                if len(ans) == 1:
                    continue
                rest = torch.as_tensor(ans[:-1])[None].expand(B, -1)  # tokens 0..n-2 predict 1..n-1
                n = rest.shape[1]
                c = cache if k == len(answers) - 1 else copy.deepcopy(cache)
                pos = (P + lens[:, None] + torch.arange(n)).to(device)
                am_k = torch.cat([am, torch.ones(B, n, dtype=torch.long)], dim=1)
                lp = model(input_ids=rest.to(device), attention_mask=am_k.to(device), **{kv: c},
                           use_cache=True, position_ids=pos).logits.float().log_softmax(-1).cpu()
                out[rows, k] += lp[:, torch.arange(n), torch.as_tensor(ans[1:])].sum(-1).numpy()
        return out

    def _prompts(self, timelines) -> list[str]:
        w = timelines.windows(self.window)
        return [build_prompt(self.task_, self.label_names_, self.examples_, *self._history(timelines, w, i),
                             self.max_post_chars) for i in range(len(timelines.df))]

    def predict_proba(self, timelines) -> np.ndarray:
        """Softmax over labels of (label log-probability - bias_)."""
        if not hasattr(self, "examples_"):
            raise ValueError("this classifier is not fitted yet; call fit(train_timelines) first")
        lp = torch.as_tensor(self.label_logprobs(self._prompts(timelines)) - self.bias_)
        return lp.softmax(-1).numpy().astype(np.float32)

    def predict(self, timelines) -> np.ndarray:
        return self.predict_proba(timelines).argmax(-1)


__all__ = ["FewShotLLMClassifier", "build_prompt", "default_task", "format_example", "shared_prefix_length"]
