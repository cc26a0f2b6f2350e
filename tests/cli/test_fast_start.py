"""`tempo-analysis --help` and every `<command> --help` start without the heavy stack.

The CLI imports a wing only when its command runs, so parsing and help never load torch,
transformers or pandas (this is what keeps `--help` well under a second or two).
"""
import subprocess
import sys

import pytest

HEAVY = ("torch", "transformers", "pandas", "torch_geometric", "umap")
COMMANDS = [[], ["world"], ["stream", "evaluate"], ["semantic-change", "rank"], ["diffusion", "train"],
            ["diffusion", "analyze"], ["future-text", "train"], ["future-text", "generate"], ["encoder", "mlm-eval"]]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a) or "top")
def test_help_loads_no_heavy_module(argv):
    code = (
        "import sys, contextlib, io\n"
        "from tempo_analysis.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n"
        f"        main({argv + ['--help']!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        "assert 'usage:' in out.getvalue(), out.getvalue()\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "", f"--help imported {proc.stdout.strip()}"
