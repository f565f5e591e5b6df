"""The numba cache guard of :mod:`models._kernels`: an edit of a kernel module that a cached
kernel only *calls* (numba checks only the file that defines the cached function) still
recompiles the kernel, in the shared kernel package and in a docking unit's own
(``models/<unit>/_kernels``).

Each check runs in a copy of ``models/`` in a temporary directory, in fresh subprocesses (a
cached kernel is loaded only at the first call of a process). The cached entry point is
``contact_segments.segment_vs_segment``; its result depends on ``PERP_MIN`` (common
perpendiculars shorter than it are no contact), defined in the callee module
``contact_layout`` together with ``check_penetration``, which it calls. Two segments whose
common perpendicular is 0.5 nm: no contact with ``PERP_MIN = 1e-9`` m, a contact 0.5 nm deep
with ``1e-10`` m.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import models
from models._kernels import GUARD_ENV, STAMP_NAME

MODELS = Path(models.__file__).resolve().parent

PROBE = textwrap.dedent("""
    import json
    import models
    from models._kernels import numba_cache_dir
    from models._kernels.contact_segments import segment_vs_segment as f
    # active segment along y at z = 0.5 nm above the passive one along z, crossing at x = 0
    r = f(0.0, -1.0, 0.0, 0.0, 2.0, 0.0, -5e-10, 0.0, -1.0, 0.0, 0.0, 2.0, 1.0)
    print(json.dumps({"status": int(r[0]), "depth": float(r[1]),
                      "hits": sum(f.stats.cache_hits.values()),
                      "misses": sum(f.stats.cache_misses.values()),
                      "models": models.__file__, "cache": str(numba_cache_dir())}))
""")


def _copy(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(MODELS, root / "models",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    return root


def _env(root, cache_dir, guard=True):
    env = dict(os.environ, PYTHONPATH=str(root))
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop(GUARD_ENV, None)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    if not guard:
        env[GUARD_ENV] = "0"
    return env


def _run(root, cache_dir, guard=True):
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=_env(root, cache_dir, guard),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert Path(res["models"]).resolve().parent == root / "models"   # the copy, not the repo
    return res


def _edit_perp_min(root, value):
    path = root / "models" / "_kernels" / "contact_layout.py"
    src = path.read_text()
    old = "PERP_MIN = 1e-9 "
    assert src.count(old) == 1
    path.write_text(src.replace(old, f"PERP_MIN = {value} "))


@pytest.mark.parametrize("where", ["in_tree", "NUMBA_CACHE_DIR"])
def test_editing_a_callee_module_recompiles_the_cached_caller(tmp_path, where):
    root = _copy(tmp_path)
    cache_dir = tmp_path / "numba_cache" if where == "NUMBA_CACHE_DIR" else None
    first = _run(root, cache_dir)
    assert (first["status"], first["depth"], first["misses"]) == (0, 0.0, 1)   # compiled
    cache = Path(first["cache"])
    if cache_dir is None:
        assert cache == root / "models" / "_kernels" / "__pycache__"
    else:
        assert cache.parent == cache_dir
    assert (cache / STAMP_NAME).is_file()
    assert list(cache.glob("contact_segments.segment_vs_segment-*.nbi"))
    # unchanged sources: the guard leaves the cache alone
    again = _run(root, cache_dir)
    assert (again["status"], again["hits"], again["misses"]) == (0, 1, 0)

    _edit_perp_min(root, "1e-10")
    # without the guard numba loads the stale machine code: the old PERP_MIN still rules
    stale = _run(root, cache_dir, guard=False)
    assert (stale["status"], stale["depth"], stale["hits"]) == (0, 0.0, 1)
    # with it the edit of the callee module recompiles the caller
    fresh = _run(root, cache_dir)
    assert fresh["status"] == 1 and fresh["misses"] == 1
    assert fresh["depth"] == pytest.approx(5e-10, rel=1e-6)
    # and the new build is cached in turn
    cached = _run(root, cache_dir)
    assert (cached["status"], cached["hits"], cached["misses"]) == (1, 1, 0)


def test_processes_importing_at_once_after_an_edit_all_see_it(tmp_path):
    # four processes start together after an edit (as pytest-xdist workers do): each one
    # imports the package (the guard may delete files another has just written or is
    # loading), none fails and all compute with the edited constant
    root = _copy(tmp_path)
    assert _run(root, None)["status"] == 0
    _edit_perp_min(root, "1e-10")
    procs = [subprocess.Popen([sys.executable, "-c", PROBE], cwd=root, env=_env(root, None),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        res = json.loads(out.strip().splitlines()[-1])
        assert res["status"] == 1 and res["depth"] == pytest.approx(5e-10, rel=1e-6)
    stamp = root / "models" / "_kernels" / "__pycache__" / STAMP_NAME
    assert len(stamp.read_text()) == 64
    assert not list(stamp.parent.glob(STAMP_NAME + ".*"))   # no temporary stamp left over


def test_kernels_import_only_kernel_modules():
    # the guard hashes the kernel packages only: a kernel must not call a compiled function
    # defined anywhere else (this would escape the guard)
    import ast

    from models._kernels import kernel_dirs

    allowed = {"__future__", "math", "numpy", "numba"}
    packages = tuple(".".join(d.relative_to(MODELS.parent).parts) for d in kernel_dirs())
    paths = [p for d in kernel_dirs() for p in sorted(d.glob("*.py"))]
    assert len(paths) > 30
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                assert (any(name == k or name.startswith(k + ".") for k in packages)
                        or top in allowed or top in sys.stdlib_module_names), (path, name)


UNIT_PROBE = textwrap.dedent("""
    import json
    import numpy as np
    from models._kernels import numba_cache_dir
    from models.peripheral._kernels.kernel import _sensed as f
    # three capture sensors: stroke (column SO_DELTA = 0) none, force (column 1) positive
    so = np.zeros((3, 5))
    so[:, 1] = 1.0
    print(json.dumps({"sensed": bool(f(so)), "hits": sum(f.stats.cache_hits.values()),
                      "misses": sum(f.stats.cache_misses.values()),
                      "cache": str(numba_cache_dir(f))}))
""")


def test_editing_a_units_kernel_module_recompiles_the_units_cached_caller(tmp_path):
    """In a unit's folder: ``kernel._sensed`` (cached in ``models/peripheral/_kernels``) reads
    the column ``latch.SO_DELTA`` of another module of the same folder. Moving that column
    to 1 (the force, positive here) makes it see a sensor that touches: stale without the
    guard, fresh with it."""
    root = _copy(tmp_path)

    def run(guard=True):
        out = subprocess.run([sys.executable, "-c", UNIT_PROBE], cwd=root,
                             env=_env(root, None, guard), capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout.strip().splitlines()[-1])

    first = run()
    assert (first["sensed"], first["misses"]) == (False, 1)
    cache = Path(first["cache"])
    assert cache == root / "models" / "peripheral" / "_kernels" / "__pycache__"
    assert (cache / STAMP_NAME).is_file()
    assert run()["hits"] == 1                       # unchanged sources: loaded from the cache
    latch = root / "models" / "peripheral" / "_kernels" / "latch.py"
    src = latch.read_text()
    old = "SO_DELTA = 0 "
    assert src.count(old) == 1
    latch.write_text(src.replace(old, "SO_DELTA = 1 "))
    stale = run(guard=False)
    assert (stale["sensed"], stale["hits"]) == (False, 1)
    fresh = run()
    assert (fresh["sensed"], fresh["misses"]) == (True, 1)
    assert run()["hits"] == 1
