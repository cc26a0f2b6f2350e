"""The package's own import graph: every module imports in a fresh interpreter, no cycles, the
shared lower layers never reach up into a method wing (docs/ARCHITECTURE.md), ``data`` never imports
``world`` (the resolver above both joins them), the facades load no plotly, and nothing the product
or its tests run reads ``research/`` or the old ``docs/results/``."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tempo_analysis"
WINGS = ("stream", "semantic_change", "diffusion", "future_text")
LOWER = ("data", "training", "evaluation", "encoders", "encoder_mlm", "causal_lm", "hub", "outputs", "world",
         "notebook", "resolve")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imported(mod: str, path: Path, known: set[str]) -> set[str]:
    """The package modules `mod` imports, at the top or inside functions (both are real links)."""
    is_pkg = path.name == "__init__.py"
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = mod.split(".") if is_pkg else mod.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                head = ".".join(base + ([node.module] if node.module else []))
            else:
                head = node.module or ""
            names = [head] + [f"{head}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            # `import a.b.c` and `from a.b import c` reach the deepest known module
            while name and name not in known:
                name = name.rpartition(".")[0]
            # a module's own parent packages are imported implicitly anyway: not an edge
            if name.startswith("tempo_analysis") and name != mod and not mod.startswith(name + "."):
                out.add(name)
    return out


def graph() -> dict[str, set[str]]:
    mods = modules()
    return {m: imported(m, p, set(mods)) for m, p in mods.items()}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(g.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(g):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def layer(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_imports_in_a_fresh_interpreter():
    code = (
        "import importlib, sys\n"
        f"names = {sorted(modules())!r}\n"
        "bad = []\n"
        "for n in names:\n"
        "    try:\n"
        "        importlib.import_module(n)\n"
        "    except Exception as e:\n"
        "        bad.append(f'{n}: {type(e).__name__}: {e}')\n"
        "print('\\n'.join(bad)); sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


def test_no_import_cycle():
    cycle = find_cycle(graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_lower_layers_never_import_a_method_wing():
    bad = [f"{m} -> {t}" for m, targets in graph().items() if layer(m) in LOWER
           for t in targets if layer(t) in WINGS]
    assert not bad, "lower layer imports a method wing:\n" + "\n".join(bad)


def test_wings_do_not_import_each_other():
    bad = [f"{m} -> {t}" for m, targets in graph().items() if layer(m) in WINGS
           for t in targets if layer(t) in WINGS and layer(t) != layer(m)]
    assert not bad, "one method wing imports another:\n" + "\n".join(bad)


@pytest.mark.parametrize("case", ["cycle", "upward"])
def test_the_checks_can_fail(case):
    """The checkers themselves: a planted cycle and a planted upward import are caught."""
    if case == "cycle":
        g = {"tempo_analysis.a": {"tempo_analysis.b"}, "tempo_analysis.b": {"tempo_analysis.c"},
             "tempo_analysis.c": {"tempo_analysis.a"}}
        assert find_cycle(g) == ["tempo_analysis.a", "tempo_analysis.b", "tempo_analysis.c", "tempo_analysis.a"]
    else:
        assert layer("tempo_analysis.data.specs") in LOWER and layer("tempo_analysis.stream.model") in WINGS


# --- the data/world seam ---------------------------------------------------------------------------

def data_imports_world(g: dict[str, set[str]]) -> list[str]:
    """``data`` holds types and loaders: it imports no ``world``, at the top or inside a function."""
    return [f"{m} -> {t}" for m, targets in g.items() if layer(m) == "data" for t in targets if layer(t) == "world"]


def function_level_imports(path: Path, of: str) -> list[int]:
    """Lines of ``path`` that import the package layer ``of`` inside a function (to dodge a cycle)."""
    lines = []
    for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(of):
                    lines.append(node.lineno)
                elif isinstance(node, ast.Import) and any(a.name.startswith(of) for a in node.names):
                    lines.append(node.lineno)
    return lines


def test_data_imports_no_world():
    bad = data_imports_world(graph())
    assert not bad, "tempo_analysis.data imports tempo_analysis.world (the resolver joins them):\n" + "\n".join(bad)


def test_world_imports_the_data_types_at_module_top():
    bad = [f"{p.relative_to(ROOT)}:{n}" for p in sorted((PACKAGE / "world").glob("*.py"))
           for n in function_level_imports(p, "tempo_analysis.data")]
    assert not bad, "world imports data inside a function (import it at the top):\n" + "\n".join(bad)


def test_the_resolver_imports_data_and_world_but_no_wing():
    targets = graph()["tempo_analysis.resolve"]
    assert {layer(t) for t in targets} >= {"data", "world"}
    assert not [t for t in targets if layer(t) in WINGS], targets


# --- the facades load no plotly ----------------------------------------------------------------------

def test_the_facade_modules_import_no_plotly():
    """Figures are built by tempo_analysis.figures on first use: importing a facade loads no plotly.
    One interpreter imports the four facades in turn (torch loads once) and names the first that
    brought plotly in."""
    code = ("import importlib, sys\n"
            f"for wing in {list(WINGS)!r}:\n"
            "    importlib.import_module(f'tempo_analysis.{wing}.estimator')\n"
            "    if 'plotly' in sys.modules:\n"
            "        sys.exit(f'tempo_analysis.{wing}.estimator imports plotly')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]


# --- nothing reads research/ or docs/ ------------------------------------------------------------------

_PATH_TEXT = re.compile(r"^\s*(\.\./)*(docs|research)/\S*$")    # a literal that is a path under docs/ or research/


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.add(id(first.value))
    return found


def _path_parts(node: ast.AST) -> list[str]:
    """The literal components of ``a / "b" / "c"``, ``Path("a", "b")`` or ``p.joinpath("c")`` ("?" elsewhere)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        return _path_parts(node.left) + _path_parts(node.right)
    if isinstance(node, ast.Call):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("Path", "PurePath", "joinpath"):
            base = _path_parts(func.value) if name == "joinpath" else []
            return base + [p for a in node.args for p in _path_parts(a)]
        return ["?"]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [c for c in node.value.split("/") if c]
    return ["?"]


def research_reads(source: str, *, docs_allowed: bool) -> list[tuple[int, str]]:
    """Where ``source`` names a path under ``research/`` or the old ``docs/results/`` in code (comments and
    docstrings do not count). Without ``docs_allowed`` (the package, the notebooks) any ``docs/`` path counts;
    the tests may read the docs they check (``docs/*.md``), never their results."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            v = node.value
            if "research/" in v or "docs/results" in v or (not docs_allowed and _PATH_TEXT.match(v)):
                found.append((node.lineno, v[:80]))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) or (
                isinstance(node, ast.Call) and (getattr(node.func, "id", None) in ("Path", "PurePath")
                                                or getattr(node.func, "attr", None) == "joinpath")):
            parts = _path_parts(node)
            for i, p in enumerate(parts):
                if p == "research" or (p == "docs" and (not docs_allowed or parts[i + 1:i + 2] == ["results"])):
                    found.append((node.lineno, " / ".join(parts)))
    return sorted(set(found))


def test_nothing_in_the_package_the_notebooks_or_the_tests_reads_research_or_docs():
    """research/ (the results logs, the diagnostics) and docs/ are not product: a lesson shows a recorded
    run from tempo_analysis/assets/recorded/. Tests check the docs' text, never a results log."""
    bad = []
    for folder, docs_allowed in (("tempo_analysis", False), ("notebooks", False), ("tests", True)):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == Path(__file__).resolve():     # this file's own examples of what is caught
                continue
            bad += [f"{path.relative_to(ROOT)}:{n}: {what}"
                    for n, what in research_reads(path.read_text(encoding="utf-8"), docs_allowed=docs_allowed)]
    assert not bad, "a path under research/ or docs/ in code:\n" + "\n".join(bad)


@pytest.mark.parametrize("source, docs_allowed, found", [
    ('ROOT / "docs" / "results" / "stream"', True, True),
    ('Path("research") / "results"', True, True),
    ('root.joinpath("docs", "methods", "x.md")', False, True),
    ('root.joinpath("docs", "methods", "x.md")', True, False),
    ('open("research/results/x.json")', True, True),
    ('STUDY = "docs/results/semantic_change/study.json"', True, True),
    ('HELP = "docs/methods/stream.md"', False, True),
    ('HELP = "see docs/methods/stream.md for the design"', False, False),
    ('# ROOT / "docs" / "results"\nx = 1', False, False),
    ('def f():\n    """Reads docs/results/x.json and research/y."""', False, False),
    ('row = {"docs": 3}', False, False),
])
def test_the_research_scan_can_fail(source, docs_allowed, found):
    assert bool(research_reads(source, docs_allowed=docs_allowed)) is found


def test_the_seam_checks_can_fail():
    """A planted data -> world edge and a planted function-level import of data in world are caught."""
    assert data_imports_world({"tempo_analysis.data.specs": {"tempo_analysis.world.world"}})
    assert not data_imports_world({"tempo_analysis.world.world": {"tempo_analysis.data.specs"}})
    planted = PACKAGE.parent / "build" / "planted_world_module.py"
    planted.parent.mkdir(exist_ok=True)
    planted.write_text("import os\n\ndef f():\n    from tempo_analysis.data import Timelines\n    return Timelines\n")
    try:
        assert function_level_imports(planted, "tempo_analysis.data") == [4]
    finally:
        planted.unlink()
