"""Training and scoring on cached states: the one adaptation every future-text variant shares.

A variant is a :class:`~tempo_analysis.future_text.model.FutureLM` around the frozen base LM.
Only its head adaptation (per-token output offset) and, for the bias variants, its temporal bias
and ``alpha`` are trained, on the head-input states cached by ``states.py``: batches of
positions drawn from one year each (the bias LSTM then runs once per step), Adam, early
stopping on the dev positions' loss with the best weights kept. Scoring sums each document's
negative log-likelihood from the same states (exactly the full model's log-probabilities, a test
checks it), so perplexities are per document and never restart the context mid-document.
"""

from __future__ import annotations

import numpy as np
import torch

from tempo_analysis.future_text.states import StateCache


class PositionTerms:
    """Cached states plus the per-position terms that depend on S: ``lse_rest`` and ``z_target``."""

    def __init__(self, states: StateCache, lse_rest: torch.Tensor, z_target: torch.Tensor):
        self.states, self.lse_rest, self.z_target = states, lse_rest, z_target
        self.pos_years = states.pos_years

    def positions_of_years(self, years) -> np.ndarray:
        return np.flatnonzero(np.isin(self.pos_years.numpy(), list(years)))

    def positions_of_docs(self, docs) -> np.ndarray:
        return np.flatnonzero(np.isin(self.states.doc.numpy(), list(docs)))

    def nll(self, model, idx, alpha=None, chunk: int = 2048) -> torch.Tensor:
        """Per-position NLL ``[len(idx)]`` of ``model`` at positions ``idx`` (no grad)."""
        dev = model.offset.device
        out = []
        with torch.no_grad():
            for s in range(0, len(idx), chunk):
                i = torch.as_tensor(idx[s:s + chunk])
                out.append(model.state_nll(self.states.hidden[i].to(dev), self.pos_years[i].to(dev),
                                           self.states.targets[i].to(dev), self.lse_rest[i].to(dev),
                                           self.z_target[i].to(dev), alpha).cpu())
        return torch.cat(out) if out else torch.zeros(0)

    def document_sums(self, model, docs, content_mask: np.ndarray) -> dict:
        """``score_documents``-style sums per document (``nll, n, content_nll, content_n``)."""
        docs = list(docs)
        idx = self.positions_of_docs(docs)
        nll = self.nll(model, idx).double().numpy()
        d = self.states.doc.numpy()[idx]
        col = {doc: k for k, doc in enumerate(docs)}
        rows = np.array([col[x] for x in d], dtype=np.int64)
        content = content_mask[self.states.targets.numpy()[idx]]
        out = {k: np.zeros(len(docs)) for k in ("nll", "n", "content_nll", "content_n")}
        np.add.at(out["nll"], rows, nll)
        np.add.at(out["n"], rows, 1.0)
        np.add.at(out["content_nll"], rows, nll * content)
        np.add.at(out["content_n"], rows, content.astype(float))
        return out


def train_on_states(model, terms: PositionTerms, train_idx: np.ndarray, dev_idx: np.ndarray, *, steps: int,
                    batch_positions: int, lr: float, bias_lr: float, eval_every: int, seed: int = 0,
                    year_batches: bool = True) -> dict:
    """Train ``model``'s offset (+ bias, + alpha when learned) in place; returns the history dict."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    bias_params = [p for n, p in model.named_parameters() if not n.startswith("lm.") and n != "offset"
                   and p.requires_grad]
    groups = [{"params": [model.offset], "lr": lr}]
    if bias_params:
        groups.append({"params": bias_params, "lr": bias_lr})
    opt = torch.optim.Adam(groups)
    years = terms.pos_years.numpy()[train_idx]
    by_year = {int(y): train_idx[years == y] for y in np.unique(years)}
    ys = np.array(list(by_year))
    weights = np.array([len(v) for v in by_year.values()], dtype=float)
    weights /= weights.sum()
    dev = model.offset.device
    st = terms.states

    def dev_loss():
        return float(terms.nll(model, dev_idx).mean()) if len(dev_idx) else float("nan")

    best = dev_loss()
    best_state, log = snapshot(model), {"step": [0], "dev_loss": [best]}
    model.train()
    for step in range(1, steps + 1):
        pool = by_year[int(rng.choice(ys, p=weights))] if year_batches else train_idx
        i = torch.as_tensor(np.sort(rng.choice(pool, size=min(batch_positions, len(pool)), replace=False)))
        loss = model.state_nll(st.hidden[i].to(dev), terms.pos_years[i].to(dev), st.targets[i].to(dev),
                               terms.lse_rest[i].to(dev), terms.z_target[i].to(dev)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0 or step == steps:
            model.eval()
            cur = dev_loss()
            model.train()
            log["step"].append(step)
            log["dev_loss"].append(cur)
            if cur <= best or np.isnan(best):          # ties keep the later weights
                best, best_state = cur, snapshot(model)
    model.load_state_dict(best_state, strict=False)
    model.eval()
    model.config.alpha = float(model.alpha.detach())
    log["best_dev_loss"] = best
    return log


def snapshot(model) -> dict:
    """A copy of everything but the frozen LM."""
    return {k: v.detach().clone() for k, v in model.state_dict().items() if not k.startswith("lm.")}
