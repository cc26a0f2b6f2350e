"""How often does a Voila dashboard lose its kernel connection? Fresh starts of lesson 00's app,
20 slider moves each, under a given kernel-manager option.

    .venv/bin/python research/scripts/voila_race.py --starts 5 --kernels make      # the Makefile's option
    .venv/bin/python research/scripts/voila_race.py --starts 5 --kernels voila     # Voila's own manager

Prints one line per start (moves redrawn, race seen) and a JSON summary at the end.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "tests" / "notebooks"), str(ROOT / "scripts")]

from tempo_analysis import notebook as nbk  # noqa: E402
from tempo_analysis.data.locations import ENV_DATA, data_dir  # noqa: E402

import test_app_and_site as app  # noqa: E402

KERNELS = {"make": app.VOILA_KERNELS, "voila": "", "plain": "--VoilaConfiguration.multi_kernel_manager_class="
           "jupyter_server.services.kernels.kernelmanager.MappingKernelManager",
           "async": "--VoilaConfiguration.multi_kernel_manager_class="
           "jupyter_server.services.kernels.kernelmanager.AsyncMappingKernelManager"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--kernels", choices=sorted(KERNELS), default="make")
    ap.add_argument("--reloads", type=int, default=1, help="reloads allowed for a page that shows no widgets")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="voila-race-"))
    env = {ENV_DATA: str(data_dir(ROOT)), nbk.ENV_CACHE: str(work / "cache"), nbk.ENV_SUMMARY: str(work / "s.json")}
    rows = []
    for start in range(args.starts):
        folder = work / f"start{start}"
        folder.mkdir()
        try:
            drive = app.drive_dashboard(app.NOTEBOOKS_DIR / "00_overview.ipynb", folder, env, KERNELS[args.kernels],
                                        reloads=args.reloads)
            done, log, error = drive.done, drive.log, ""
            reloads, second = drive.reloads, drive.second_moves
        except Exception as e:  # a page that never shows its widgets
            done, log, error = [], (folder / "voila.log").read_text(errors="replace"), f"{type(e).__name__}: {e}"[:200]
            reloads, second = args.reloads, []
        row = {"start": start, "redrawn": sum(done), "moves": len(app.MOVES), "race": app.WEBSOCKET_RACE in log,
               "reloads": reloads, "second_moves": second, "error": error}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps({"kernels": args.kernels, "starts": args.starts,
                      "failed_starts": sum(r["redrawn"] < r["moves"] for r in rows),
                      "races": sum(r["race"] for r in rows), "reloads": sum(r["reloads"] for r in rows),
                      "second_moves": sum(len(r["second_moves"]) for r in rows)}))


if __name__ == "__main__":
    main()
