"""Paired comparison of `tempo-analysis stream evaluate` results run on the same timeline folds.

Every model evaluated with the same data, number of folds, dev fraction and split seed sees the
same train / dev / test timelines in each fold, whatever its window or seeds. The data are
checked by their counts of timelines and posts and their labels, not by how the --data spec was
written (``rumoureval2017`` and ``rumoureval2017:DIR`` are the same data). So the per-fold
differences between two models are paired: they remove the fold-to-fold spread that dominates
mean ± std on small datasets such as RumourEval-2017 (325 timelines).

    rows = load_evaluation("lrs_tempoformer.json") + load_evaluation("lrs_bilstm.json", name="BiLSTM")
    table = paired_comparison(rows)              # against the best baseline with every fold
    print(format_markdown(table))

A row is one model at one window. Its per-fold score is the mean macro-F1 over its seeds in that
fold; ``mean`` and ``std`` are over all its runs (folds x seeds), as `stream evaluate` reports them.
Rows of one model and window from several files (folds run in separate processes with
``--only-folds``) are joined. The reference is the row named by ``against``, or else the best mean among the rows that ran every
fold (or, when none did, the most folds) and are baselines (not TempoFormer or one of its
ablations); Δ is each row's per-fold score minus the reference's, over the folds both ran (the
fold numbers are written beside the differences when that is not every fold). A difference
within ``TIE_TOLERANCE`` of 0 is a tie, counted apart from the wins and losses. The "folds × seeds"
cell gives the range of seeds per fold when the folds ran different numbers of seeds. Files written before the split settings were
recorded (no ``dev_fraction`` / ``split_seed``) are read with the CLI defaults, 0.25 and 0.

The window can be chosen on dev too (`choose_window_on_dev`, `stream compare --window-on-dev
20,40`): the windows' runs share their dev timelines, so for each (fold, seed) the run of the
window with the best dev macro-F1 is the one scored, and the test fold plays no part in the choice.

With `select_seeds` (`stream compare --seeds 0,12,123`) every row keeps only the runs of the
given seeds, so a model run with more seeds than its baseline is paired seed for seed.

Each row's mean Δ comes with a 95% interval, the Student t interval over its per-fold differences
(k - 1 degrees of freedom; `delta_ci95`). It treats the folds as independent, which they are not
quite: their training sets overlap, so the interval is, if anything, too narrow. An interval that
contains 0 therefore says plainly that the folds do not separate the two models.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

SPLIT_KEYS = ("folds", "dev_fraction", "split_seed", "timelines", "posts", "label_names")
SPLIT_DEFAULTS = {"dev_fraction": 0.25, "split_seed": 0}
# a per-fold difference smaller than this is a tie, not a win or a loss: two equal fold scores can
# differ by ~1e-16 once averaged over different numbers of seeds
TIE_TOLERANCE = 1e-9


@dataclass
class EvaluationRow:
    """One model at one window: its runs' macro-F1 by fold, and where they came from."""

    name: str
    window: int | str  # a string ("dev:20,40") for a row whose window was chosen on dev
    model: str
    runs: list = field(repr=False)
    split: dict = field(repr=False)
    source: str = ""
    seconds: float | None = None

    @property
    def label(self) -> str:
        return f"{self.name} w={self.window}"

    @property
    def folds(self) -> list[int]:
        return sorted({int(r["fold"]) for r in self.runs})

    @property
    def seeds(self) -> list[int]:
        return sorted({int(r["seed"]) for r in self.runs})

    def seeds_per_fold(self) -> dict[int, int]:
        return {f: len({int(r["seed"]) for r in self.runs if int(r["fold"]) == f}) for f in self.folds}

    def per_fold(self) -> dict[int, float]:
        """Fold -> mean macro-F1 over the seeds run in that fold."""
        return {f: float(np.mean([r["macro_f1"] for r in self.runs if int(r["fold"]) == f])) for f in self.folds}

    def class_f1(self, label: str) -> float:
        """Mean F1 of ``label`` over the runs whose test fold has it (NaN when none has)."""
        kept = [r["f1"][label] for r in self.runs if label not in r.get("absent", ())]
        return float(np.mean(kept)) if kept else float("nan")


def _default_name(report: dict) -> str:
    name = str(report.get("model", "model"))
    if report.get("ablation") not in (None, "none"):
        name += f" ({report['ablation']})"
    if report.get("tune"):
        name += " (tuned on dev)"
    return name


def load_evaluation(path, name: str | None = None) -> list[EvaluationRow]:
    """The rows (one per window) of a `stream evaluate` JSON file; `name` replaces the model's name."""
    path = Path(path)
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: no such results file (write one with `tempo-analysis stream evaluate "
                                f"... --out {path.name}`)") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not a JSON file ({e}); give the --out file of `stream evaluate`") from None
    if not isinstance(report, dict) or "by_window" not in report:
        raise ValueError(f"{path}: no 'by_window' field; give the --out file of `tempo-analysis stream evaluate`")
    split = {k: report.get(k, SPLIT_DEFAULTS.get(k)) for k in SPLIT_KEYS}
    rows = []
    for w, res in report["by_window"].items():
        runs = res.get("runs") or []
        if not runs:
            raise ValueError(f"{path}: window {w} has no finished runs; nothing to compare")
        rows.append(EvaluationRow(name or _default_name(report), int(w), str(report.get("model", "")), runs, split,
                                  str(path), report.get("seconds")))
    return rows


def _is_baseline(row: EvaluationRow) -> bool:
    return row.model not in ("tempoformer", "")


def check_same_split(rows) -> None:
    """Refuse rows whose folds are not the same timelines (their differences would not be paired)."""
    first = rows[0]
    for row in rows[1:]:
        for k in SPLIT_KEYS:
            if row.split.get(k) != first.split.get(k):
                raise ValueError(
                    f"{row.source} and {first.source} differ in {k!r} ({row.split.get(k)!r} vs "
                    f"{first.split.get(k)!r}), so their folds hold different timelines and cannot be paired. "
                    f"Fix: compare evaluations run with the same --data, --folds, --dev-fraction and --split-seed.")


def join_parts(rows) -> list[EvaluationRow]:
    """Rows with the same label become one when their (fold, seed) runs do not overlap.

    This joins one evaluation shared between processes (`stream evaluate --only-folds`); the same
    run twice is refused.
    """
    joined: dict[str, EvaluationRow] = {}
    for r in rows:
        if r.label not in joined:
            joined[r.label] = EvaluationRow(r.name, r.window, r.model, list(r.runs), r.split, r.source, r.seconds)
            continue
        j = joined[r.label]
        have = {(int(x["fold"]), int(x["seed"])) for x in j.runs}
        both = sorted(have & {(int(x["fold"]), int(x["seed"])) for x in r.runs})
        if both:
            raise ValueError(f"{r.source} and {j.source} are both {r.label!r} and both hold (fold, seed) {both}; "
                             f"name them apart (FILE=NAME on the command line) or give each run once")
        j.runs += r.runs
        j.source += f" + {r.source}"
        j.seconds = None if j.seconds is None or r.seconds is None else j.seconds + r.seconds
    return list(joined.values())


def _dev_score(run: dict) -> float | None:
    """The dev macro-F1 of a `--tune` run (that of the grid point it chose, the best on dev), else None."""
    grid = (run.get("tuned") or {}).get("grid")
    return max(float(point["dev_macro_f1"]) for point in grid) if grid else None


def choose_window_on_dev(rows, windows) -> list[EvaluationRow]:
    """One row per model name that has runs at every window in `windows`: the window chosen on dev.

    For each (fold, seed) that every one of those windows ran, the run of the window with the
    highest dev macro-F1 (the best grid point of its `--tune` search; ties go to the smaller
    window) is kept, with ``window`` and ``dev_macro_f1`` added to it. The dev timelines are the
    same at every window (the split does not depend on it), so the test fold plays no part in the
    choice. The row's window is ``"dev:" + the windows``. (fold, seed) pairs that some window did
    not run are left out with a warning. A model whose runs have no dev scores (run without
    ``--tune``) gets no chosen row, with a warning that names it; its fixed-window rows stay.
    Only the new rows are returned: give them to `paired_comparison` with the others.
    """
    windows = sorted({int(w) for w in windows})
    if len(windows) < 2:
        raise ValueError(f"--window-on-dev {windows}: give two or more windows to choose from (e.g. 20,40)")
    rows = list(rows)
    if rows:
        check_same_split(rows)
    by_name: dict[str, dict[int, EvaluationRow]] = {}
    for r in join_parts(rows):
        if isinstance(r.window, str):
            continue  # a row chosen on dev already
        by_name.setdefault(r.name, {})[int(r.window)] = r
    out, untuned = [], []
    for name, at in by_name.items():
        if not set(windows) <= set(at):
            continue
        keyed = {w: {(int(x["fold"]), int(x["seed"])): x for x in at[w].runs} for w in windows}
        shared = sorted(set.intersection(*(set(k) for k in keyed.values())))
        left = sorted(set.union(*(set(k) for k in keyed.values())) - set(shared))
        if left:
            warnings.warn(f"{name}: (fold, seed) {left} did not run at every window in {windows}; the window "
                          f"chosen on dev leaves them out", stacklevel=2)
        if not shared:
            raise ValueError(f"{name}: no (fold, seed) ran at every window in {windows}; nothing to choose from")
        dev = {(w, key): _dev_score(keyed[w][key]) for w in windows for key in shared}
        missing = sorted({(w, *key) for (w, key), score in dev.items() if score is None})
        if missing:
            untuned.append(f"{name} ({' + '.join(at[w].source for w in windows)}; (window, fold, seed) "
                           f"{missing[:4]}{' ...' if len(missing) > 4 else ''})")
            continue
        runs = []
        for key in shared:
            best, neg_w = max((dev[(w, key)], -w) for w in windows)
            runs.append({**keyed[-neg_w][key], "window": -neg_w, "dev_macro_f1": best})
        first = at[windows[0]]
        seconds = [at[w].seconds for w in windows]
        out.append(EvaluationRow(name, "dev:" + ",".join(map(str, windows)), first.model, runs, first.split,
                                 " + ".join(at[w].source for w in windows),
                                 None if None in seconds else float(sum(seconds))))
    fix = ("run it with `stream evaluate --tune ...` (every grid point's dev macro-F1 is recorded), "
           "or drop --window-on-dev")
    if untuned and out:
        warnings.warn(f"--window-on-dev: no dev scores, so no window chosen on dev for: {'; '.join(untuned)}. "
                      f"Their fixed-window rows are kept; to choose, {fix}.", stacklevel=2)
    if untuned and not out:
        raise ValueError(f"--window-on-dev: no dev scores, so no window can be chosen on dev for: "
                         f"{'; '.join(untuned)}. Fix: {fix}.")
    if not out:
        raise ValueError(f"--window-on-dev {','.join(map(str, windows))}: no model has runs at all of these windows "
                         f"(have: {sorted((r.name, r.window) for r in rows)})")
    return out


def select_seeds(rows, seeds) -> list[EvaluationRow]:
    """The rows with only the runs of `seeds`, so that every row's per-fold mean is over the same seeds.

    A model run with four seeds compared with a baseline run with three is then paired seed for
    seed. The parts of one row in several files are joined first (`join_parts`). A row holding
    none of the seeds is dropped and a row missing some of them is kept, each with a warning that
    names it and the seeds it has, so that nothing is left out silently. A kept row's ``seconds``
    is the sum of its kept runs' (None when a run has no timing), not its files' whole wall time.
    """
    want = sorted({int(s) for s in seeds})
    if not want:
        raise ValueError("--seeds: give one or more seeds joined by commas, e.g. 0,12,123")
    out = []
    for r in join_parts(rows):
        runs = [x for x in r.runs if int(x["seed"]) in want]
        if not runs:
            warnings.warn(f"{r.label} ({r.source}) has no run with seeds {want} (it has {r.seeds}); it is left "
                          f"out of the comparison", stacklevel=2)
            continue
        timed = [x.get("seconds") for x in runs]
        seconds = None if None in timed else float(sum(timed))
        kept = EvaluationRow(r.name, r.window, r.model, runs, r.split, r.source, seconds)
        # over the joined row's folds, so that a fold left with none of the seeds is named too
        missing = {f: sorted(set(want) - {int(x["seed"]) for x in runs if int(x["fold"]) == f}) for f in r.folds}
        missing = {f: m for f, m in missing.items() if m}
        if missing:
            dropped = [f for f in r.folds if f not in kept.folds]
            warnings.warn(f"{r.label} ({r.source}) lacks seeds {missing} (fold: seeds); its per-fold means there "
                          f"are over the seeds it has" + (f", and folds {dropped} are left out" if dropped else ""),
                          stacklevel=2)
        out.append(kept)
    return out


def delta_interval(deltas, level: float = 0.95) -> list[float] | None:
    """The Student t interval for the mean of paired per-fold differences (None below two folds)."""
    d = np.asarray(list(deltas), dtype=float)
    if d.size < 2:
        return None
    from scipy import stats

    half = stats.t.ppf(0.5 + level / 2, d.size - 1) * d.std(ddof=1) / np.sqrt(d.size)
    return [float(d.mean() - half), float(d.mean() + half)]


def paired_comparison(rows, against: str | None = None) -> dict:
    """Mean ± std per row and per-fold differences against a reference row (see the module docstring)."""
    rows = list(rows)
    if not rows:
        raise ValueError("nothing to compare: give at least one results file")
    check_same_split(rows)
    rows = join_parts(rows)
    labels = [r.label for r in rows]
    n_folds = int(rows[0].split["folds"])
    if against is not None:
        matches = [r for r in rows if against in (r.label, r.name)]
        if len(matches) != 1:
            raise ValueError(f"--against {against!r} matches {len(matches)} rows; give one of {labels}")
        ref = matches[0]
    else:
        # the rows with the most folds (every fold, when any row ran them all); among them the baselines
        most = max(len(r.folds) for r in rows)
        candidates = [r for r in rows if len(r.folds) == most]
        pool = [r for r in candidates if _is_baseline(r)] or candidates
        ref = max(pool, key=lambda r: np.mean([x["macro_f1"] for x in r.runs]))
    ref_fold = ref.per_fold()
    names = list(rows[0].split["label_names"] or [])
    out = []
    for r in rows:
        scores = np.array([x["macro_f1"] for x in r.runs])
        pf = r.per_fold()
        shared = [f for f in pf if f in ref_fold]
        deltas = [pf[f] - ref_fold[f] for f in shared]
        out.append({
            "name": r.name, "window": r.window, "label": r.label, "source": r.source,
            "folds": r.folds, "seeds": r.seeds, "n_runs": len(r.runs),
            "macro_f1_mean": float(scores.mean()),
            "macro_f1_std": float(scores.std(ddof=1)) if len(scores) > 1 else 0.0,  # as `stream evaluate`
            "f1": {n: r.class_f1(n) for n in names},
            "per_fold": {str(f): v for f, v in pf.items()},
            "delta_vs_reference": {str(f): d for f, d in zip(shared, deltas)},
            "delta_mean": float(np.mean(deltas)) if deltas else None,
            "delta_ci95": None if r is ref else delta_interval(deltas),
            "wins": int(sum(d > TIE_TOLERANCE for d in deltas)), "losses": int(sum(d < -TIE_TOLERANCE for d in deltas)),
            "ties": int(sum(abs(d) <= TIE_TOLERANCE for d in deltas)),
            "seeds_per_fold": {str(f): n for f, n in r.seeds_per_fold().items()},
            "seconds": r.seconds,
        })
    out.sort(key=lambda x: -x["macro_f1_mean"])
    return {"reference": ref.label, "folds": n_folds, "label_names": names, "split": rows[0].split, "rows": out}


def format_markdown(result: dict) -> str:
    """The comparison as a Markdown table (per fold: seed-mean macro-F1; Δ: against the reference)."""
    names, k = result["label_names"], result["folds"]
    head = (["model", "w", "folds × seeds", "macro-F1 mean ± std"] + [f"F1 {n}" for n in names]
            + [f"per fold ({', '.join(map(str, range(k)))})", f"Δ vs {result['reference']} (paired)", "Δ 95% CI (t over folds)",
               "wins / losses"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in result["rows"]:
        folds = " / ".join(f"{r['per_fold'][str(f)]:.3f}" if str(f) in r["per_fold"] else "–" for f in range(k))
        ci = r.get("delta_ci95")  # absent in comparisons written before the interval was added
        if r["label"] == result["reference"]:
            delta, interval, wl = "(reference)", "–", "–"
        elif r["delta_mean"] is None:
            delta, interval, wl = "no shared fold", "–", "–"
        else:
            per = r["delta_vs_reference"]
            # fold numbers are written out when the row does not share every fold with the reference
            label = (lambda f: "") if len(per) == k else (lambda f: f"{f}: ")
            delta = f"{r['delta_mean']:+.3f} ({', '.join(f'{label(f)}{d:+.3f}' for f, d in per.items())})"
            interval = f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "–"
            ties = r.get("ties", 0)
            wl = f"{r['wins']} / {r['losses']}" + (f" ({ties} tied)" if ties else "")
        counts = sorted(set((r.get("seeds_per_fold") or {}).values())) or [len(r["seeds"])]
        seeds = str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"
        cells = [r["name"], str(r["window"]), f"{len(r['folds'])} × {seeds}",
                 f"{r['macro_f1_mean']:.3f} ± {r['macro_f1_std']:.3f}"] + [f"{r['f1'][n]:.3f}" for n in names]
        lines.append("| " + " | ".join(cells + [folds, delta, interval, wl]) + " |")
    return "\n".join(lines)


__all__ = ["EvaluationRow", "check_same_split", "choose_window_on_dev", "delta_interval", "format_markdown", "join_parts", "load_evaluation", "paired_comparison"]
