"""The package's own import graph: every module imports in a fresh interpreter, no cycles, and the
shared lower layers never reach up into a method wing (docs/ARCHITECTURE.md)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "tempo_analysis"
WINGS = ("stream", "semantic_change", "diffusion", "future_text")
LOWER = ("data", "training", "evaluation", "encoders", "encoder_mlm", "causal_lm", "hub", "outputs", "world",
         "notebook")


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
