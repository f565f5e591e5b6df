"""The layers of the shipped packages, read from their source (every import, at module level
and inside functions):

* imports run one way, ``models`` (physics) <- ``identification`` (the inference engine and
  the ground-test fits) <- ``recon`` (flight reconstruction) <- ``reports`` (reads results)
  <- ``recon.app`` (the command line, campaigns, studies), the only code that imports
  ``reports`` or ``click``; ``telemetry_samples`` (the shipped data and the scripts that
  regenerate it) stands beside ``reports`` and imports the library only;
* one sanctioned exception: the package ``recon`` is the Python API's front door and hands
  out the names of ``recon.app.api`` (``from recon import reconstruct, load_result``), loaded
  when first asked for (:data:`FRONT_DOORS`);
* no import cycle, however indirect;
* no module is loaded by a string (``importlib``) but a docking unit, by the unit registry;
* a docking unit's own code lives in its folder: its kernels import only their folder and the
  shared kernel modules, and no unit imports another unit's modules.
"""
from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("models", "identification", "recon", "reports", "telemetry_samples")
UNITS = ("probe_cone", "peripheral")


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, int]]:
    """Every module ``name`` imports (its own packages' modules and third-party top-level
    names), with the line, wherever the import statement stands."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub if sub in MODULES else target, node.lineno))
    return out


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> tuple[int, str]:
    """(rank, group) of a module: a module may import only a lower rank or its own group."""
    if module == "recon.app" or module.startswith("recon.app."):
        return 4, "app"
    top = module.split(".")[0]
    return {"models": (0, "models"), "identification": (1, "identification"),
            "recon": (2, "recon"), "reports": (3, "reports"),
            "telemetry_samples": (3, "telemetry_samples")}[top]


def _internal(target: str) -> str | None:
    """The shipped module an import names (a name inside a module: the module), or None."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


#: package -> the module above its layer it may hand names out of (inside a function: the
#: package's module-level ``__getattr__``, so that importing it loads nothing above it)
FRONT_DOORS = {"recon": "recon.app.api"}


def test_imports_follow_the_layer_order():
    bad = []
    for name, imports in IMPORTS.items():
        rank, group = _layer(name)
        for target, line in imports:
            mod = _internal(target)
            if mod is None or FRONT_DOORS.get(name) == mod:
                continue
            r, g = _layer(mod)
            if r > rank or (r == rank and g != group):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line} imports {mod}")
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_only_the_application_imports_reports_and_click():
    bad = [f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
           for name, imports in IMPORTS.items() if _layer(name)[1] not in ("app",)
           for target, line in imports
           if target.split(".")[0] == "click"
           or (target.split(".")[0] == "reports" and _layer(name)[1] != "reports")]
    assert not bad, "\n".join(bad)


def _graph() -> dict[str, set[str]]:
    g: dict[str, set[str]] = defaultdict(set)
    for name, imports in IMPORTS.items():
        for target, _ in imports:
            mod = _internal(target)
            if mod is not None and mod != name and not name.startswith(mod + "."):
                g[name].add(mod)
    return g


def _cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []
    counter = 0
    for root in sorted(MODULES):
        if root in index:
            continue
        work = [(root, iter(sorted(g.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def test_no_import_cycle():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_check_finds_a_cycle():
    g = _graph()
    g["models.units"] = set(g.get("models.units", ())) | {"models.unit"}
    g["models.unit"] = set(g.get("models.unit", ())) | {"models.units"}
    assert ["models.unit", "models.units"] in _cycles(g)


def test_only_the_unit_registry_loads_modules_by_name():
    users = [MODULES[name].relative_to(ROOT).as_posix() for name, path in MODULES.items()
             if "importlib" in path.read_text()]
    assert users == ["models/unit.py"], users


@pytest.mark.parametrize("unit", UNITS)
def test_a_units_kernels_import_only_their_folder_and_the_shared_kernels(unit):
    own = f"models.{unit}._kernels"
    kernels = [m for m in MODULES if m == own or m.startswith(own + ".")]
    assert len(kernels) > 3, kernels
    bad = []
    for name in kernels:
        for target, line in IMPORTS[name]:
            mod = _internal(target)
            if mod is None:
                continue
            if not (mod == own or mod.startswith(own + ".") or mod == "models._kernels"
                    or mod.startswith("models._kernels.")):
                bad.append(f"{MODULES[name].relative_to(ROOT)}:{line} imports {mod}")
    assert not bad, "\n".join(bad)


def test_shared_kernels_import_no_unit():
    bad = [f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
           for name in MODULES if name.startswith("models._kernels")
           for target, line in IMPORTS[name]
           if (_internal(target) or "").split(".")[:2] in (["models", u] for u in UNITS)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("unit", UNITS)
def test_no_unit_imports_another(unit):
    others = [u for u in UNITS if u != unit]
    bad = [f"{MODULES[name].relative_to(ROOT)}:{line} imports {target}"
           for name in MODULES if name.startswith(f"models.{unit}")
           for target, line in IMPORTS[name]
           if any((_internal(target) or "").startswith(f"models.{o}") for o in others)]
    assert not bad, "\n".join(bad)


def test_the_units_initial_conditions_are_the_shared_ones():
    from models.peripheral._kernels import run_layout
    from models.probe_cone._kernels import layout
    from models.unit import IC_NAMES

    assert run_layout.IC_NAMES == IC_NAMES
    assert layout.IC_NAMES == IC_NAMES


def test_the_front_door_loads_the_api_only_when_asked():
    """``import recon`` (every module of the library imports the package first) loads
    nothing of the application; ``from recon import reconstruct, load_result`` does, and
    gives the API's own objects, not a submodule of the same name."""
    import subprocess
    import sys

    code = ("import sys, recon, recon.flight, recon.pipeline; "
            "assert not any(m.startswith('recon.app') for m in sys.modules), 'app loaded'; "
            "from recon import reconstruct, load_result, Result; "
            "from recon.app import api; "
            "assert reconstruct is api.reconstruct and load_result is api.load_result; "
            "assert Result is api.Result")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
