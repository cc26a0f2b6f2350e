import sys
from pathlib import Path

# the scripts (make_exercises, build_site, run_notebooks, notebook_exec) import one another by name
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
