"""Probe-cone kernel layouts: the named scratch regions tile their arrays, and every region a
kernel slices is one of them."""
import re
from pathlib import Path

import pytest

from models.probe_cone._kernels import layout as L

KERNELS = Path(L.__file__).parent


def test_scratch_regions_tile_the_scratch():
    # offsets + sizes cover 0 .. NSC - 1 exactly once (the import-time check, restated)
    covered = []
    for off, size in L.SC_REGIONS:
        covered.extend(range(off, off + size))
    assert sorted(covered) == list(range(L.NSC))
    # every SC_X has its SC_X_SIZE and is listed in SC_REGIONS
    names = [n for n in dir(L) if n.startswith("SC_") and not n.endswith("_SIZE")
             and n != "SC_REGIONS"]
    assert {(getattr(L, n), getattr(L, n + "_SIZE")) for n in names} == set(L.SC_REGIONS)


@pytest.mark.parametrize("regions, n", [
    (((0, 3), (2, 4)), 6),     # overlap
    (((0, 3), (4, 2)), 6),     # gap
    (((0, 3), (3, 3)), 7),     # short of the array
    (((0, 3), (3, 3)), 5),     # beyond it
    (((0, 0), (0, 5)), 5),     # empty region
])
def test_tiling_check_rejects_overlaps_gaps_and_overruns(regions, n):
    with pytest.raises(AssertionError):
        L._check_tiling(regions, n, "test")


def test_tiling_check_accepts_a_tiling_in_any_order():
    L._check_tiling(((3, 2), (0, 3), (5, 1)), 6, "test")


def test_kernels_slice_the_scratch_only_by_name():
    # no bare offsets into the scratch, the matrices or the run information, and every
    # scratch slice is sc[SC_X:SC_X + SC_X_SIZE]
    for path in sorted(KERNELS.glob("probe_cone*.py")):
        src = path.read_text()
        assert not re.search(r"\b(sc|M|info)\[\d", src), path.name
        for a, b, c in re.findall(r"\bsc\[(\w+):(\w+) \+ (\w+)\]", src):
            assert a == b and c == a + "_SIZE" and hasattr(L, a), (path.name, a, b, c)
