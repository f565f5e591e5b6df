"""The kernels compiled without numba's reference counting (``NJIT_LEAF``,
:mod:`models._kernels`): what makes that safe, and that it changes no result.

A function compiled without NRT must not allocate an array (numba refuses to compile it), return
one, or receive one from a callee: numba hands the caller a new reference that a function
without NRT never releases (a leak per call), and a returned view of an argument would be
released by the caller without having been counted (freed memory). The first is numba's, the
other two are checked here: statically over every kernel package (no leaf function calls a
kernel that keeps NRT, the ones that allocate), and on the compiled signatures of a fresh
build (slow: no leaf kernel returns an array). The results: the hot contact detectors compiled both ways give the
same bits on random inputs, and (slow) a docking of each unit in a process where the leaf
kernels keep NRT matches this one's bit for bit.
"""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

import models
from models._kernels import KERNEL_PACKAGES, NJIT, NJIT_LEAF

MODELS = Path(models.__file__).resolve().parent
ROOT = MODELS.parent


def _module_of(dotted: str) -> Path | None:
    """The file of a module ``models....`` inside the kernel packages (None elsewhere)."""
    if not dotted.startswith("models."):
        return None
    path = ROOT.joinpath(*dotted.split(".")).with_suffix(".py")
    if path.is_file():
        return path
    init = ROOT.joinpath(*dotted.split("."), "__init__.py")
    return init if init.is_file() else None


def _kernel_modules():
    """Per kernel module: its functions ``{name: (kind, node)}`` (kind ``leaf``, ``inline`` for
    ``inline="always"``, inlined into the caller's IR and compiled under its options, or
    ``nrt``) and how its names resolve: ``{local name: (module file, name)}`` for names
    imported from kernel modules, ``{alias: module file}`` for kernel modules imported
    whole."""
    mods = {}
    for pkg in KERNEL_PACKAGES:
        for path in sorted((MODELS / pkg).glob("*.py")):
            tree = ast.parse(path.read_text())
            funcs, names, aliases = {}, {}, {}
            for node in tree.body:
                if isinstance(node, ast.FunctionDef):
                    decs = [ast.unparse(d) for d in node.decorator_list]
                    if "njit(**NJIT_LEAF)" in decs:
                        funcs[node.name] = ("leaf", node)
                    elif any(d.startswith("njit(") and "inline='always'" in d for d in decs):
                        funcs[node.name] = ("inline", node)
                    elif any(d.startswith("njit(") for d in decs):
                        funcs[node.name] = ("nrt", node)
                elif isinstance(node, ast.ImportFrom) and node.module:
                    for al in node.names:
                        sub = _module_of(f"{node.module}.{al.name}")
                        if sub is not None:
                            aliases[al.asname or al.name] = sub
                        elif _module_of(node.module) is not None:
                            names[al.asname or al.name] = (_module_of(node.module), al.name)
                elif isinstance(node, ast.Import):
                    for al in node.names:
                        if al.asname and _module_of(al.name) is not None:
                            aliases[al.asname] = _module_of(al.name)
            mods[path] = (funcs, names, aliases)
    return mods


def test_no_leaf_kernel_calls_a_kernel_that_keeps_reference_counting():
    mods = _kernel_modules()

    def kind(target):
        path, name = target
        return mods.get(path, ({}, {}, {}))[0].get(name, (None,))[0]

    n_leaf, offenders = 0, []
    for path, (funcs, names, aliases) in mods.items():
        for fname, (k, node) in funcs.items():
            if k == "nrt":
                continue
            n_leaf += k == "leaf"
            for sub in ast.walk(node):
                if not isinstance(sub, ast.Call):
                    continue
                f = sub.func
                target = None
                if isinstance(f, ast.Name):
                    target = (path, f.id) if f.id in funcs else names.get(f.id)
                elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                        and f.value.id in aliases:
                    target = (aliases[f.value.id], f.attr)
                if target is not None and kind(target) == "nrt":
                    offenders.append(f"{path.relative_to(ROOT)}:{fname} calls "
                                     f"{target[0].relative_to(ROOT)}:{target[1]}")
    assert n_leaf > 150
    assert not offenders, offenders
    # and the ones that allocate keep NRT
    for path, name in ((MODELS / "peripheral/_kernels/kernel.py", "run"),
                       (MODELS / "probe_cone/_kernels/kernel.py", "run"),
                       (MODELS / "_kernels/trace_layout.py", "trace_begin")):
        assert kind((path, name)) == "nrt"


def test_leaf_contact_detectors_give_the_bits_of_their_counted_twins():
    from models._kernels import contact_segments as cs
    from models._kernels.contact_layout import (C_BX, C_R, C_SIDE, C_SIZE, C_UX, PL_RMAX,
                                                PL_RMIN, PL_SIDE, PL_SIZE, PL_X)
    from models._kernels.contact_revolution import sphere_vs_plane

    rng = np.random.default_rng(3)
    twins = {f: njit(**NJIT)(f.py_func) for f in (cs.segment_vs_circle, cs.segment_vs_segment,
                                                   sphere_vs_plane)}
    assert all(f.targetoptions["_nrt"] is False for f in twins) and NJIT_LEAF["_nrt"] is False
    hits = 0
    for _ in range(400):
        circ = np.zeros(C_SIZE)
        circ[C_BX:C_BX + 3] = rng.normal(0, 0.05, 3)
        u = rng.normal(size=3)
        circ[C_UX:C_UX + 3] = u / np.linalg.norm(u)
        circ[C_R] = 0.8 + 0.1 * rng.random()
        circ[C_SIDE] = rng.choice([-1.0, 1.0])
        seg = rng.normal(0, 0.6, 6)
        plane = np.zeros(PL_SIZE)
        plane[PL_X], plane[PL_SIDE] = rng.normal(0, 0.01), rng.choice([-1.0, 1.0])
        plane[PL_RMIN], plane[PL_RMAX] = 0.02, 0.1
        args = {cs.segment_vs_circle: (*seg, circ, 0.01),
                cs.segment_vs_segment: (*seg, *rng.normal(0, 0.6, 6), 0.05),
                sphere_vs_plane: (*rng.normal(0, 0.05, 3), 0.02, plane, 0.01)}
        for f, twin in twins.items():
            a, b = f(*args[f]), twin(*args[f])
            assert np.array_equal(np.asarray(a, float), np.asarray(b, float), equal_nan=True)
            hits += a[0] != 0
    assert hits > 50


_COUNTED = """
import json, sys
import numpy as np
from numba import types
from numba.core.dispatcher import Dispatcher
import models._kernels as mk
if sys.argv[1] == "counted":
    mk.NJIT_LEAF = dict(mk.NJIT)
from models.probe_cone import load_preset, simulate
from models.peripheral import simulate as ps
out = {}
for key, tr in (("probe_cone", simulate(load_preset("reference"), duration=6.0)),
                ("peripheral", ps.simulate(ps.load_scenario("reference"), duration=4.0))):
    out[key] = {c: np.asarray(tr[c]).tobytes().hex() for c in tr.channels}

def has_array(t):
    return isinstance(t, types.Array) or (isinstance(t, types.BaseTuple)
                                          and any(has_array(x) for x in t))

# compiled afresh, every callee has its overloads: the leaf ones' return types
leaf, arrays = 0, []
for name, mod in list(sys.modules.items()):
    for obj in list(vars(mod).values()) if name.startswith("models.") else ():
        if isinstance(obj, Dispatcher) and obj.__module__ == name \\
                and obj.targetoptions.get("_nrt", True) is False:
            for cres in obj.overloads.values():
                leaf += 1
                if has_array(cres.signature.return_type):
                    arrays.append(f"{name}.{obj.__name__}: {cres.signature.return_type}")
out["leaf_overloads"], out["leaf_returning_arrays"] = leaf, arrays
print(json.dumps(out))
"""


@pytest.mark.slow
def test_dockings_are_bit_for_bit_those_with_reference_counting(tmp_path):
    """Both units' reference dockings (6 s and 4 s, through capture) in a process whose leaf
    kernels keep NRT against the leaf build, each compiled afresh into its own cache; in the
    leaf build no compiled leaf kernel returns an array."""
    runs = {}
    for mode in ("counted", "leaf"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / mode)}
        proc = subprocess.run([sys.executable, "-c", _COUNTED, mode], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=1800)
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs[mode] = json.loads(proc.stdout.strip().splitlines()[-1])
    leaf = runs["leaf"]
    assert leaf["leaf_overloads"] > 100 and runs["counted"]["leaf_overloads"] == 0
    assert leaf["leaf_returning_arrays"] == []
    for unit in ("probe_cone", "peripheral"):
        assert runs["counted"][unit] == leaf[unit], unit
