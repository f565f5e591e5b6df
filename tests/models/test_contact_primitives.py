"""Primitives: validation with dotted keys, packing, transforms into PU."""
from __future__ import annotations

import math

import numpy as np
import pytest

from models._kernels import contact as K
from models.contact import (Circle, GeneratorFan, Segment, Slot, Sphere, SurfaceOfRevolution,
                            frames)
from models.errors import InputError


def test_from_dict_names_unknown_and_bad_keys():
    s = SurfaceOfRevolution.from_dict({"meridian": [[0, 1], [0, 0.5], [0.3, 0.3]]})
    assert s.meridian == ((0.0, 1.0), (0.0, 0.5), (0.3, 0.3))
    with pytest.raises(InputError) as info:
        Sphere.from_dict({"center": [0, 0, 0], "radius": 0.1, "colour": "red"},
                         key="probe.head")
    assert info.value.key == "probe.head.colour"
    with pytest.raises(InputError) as info:
        Sphere.from_dict({"center": [0, 0, 0], "radius": -0.1}, key="probe.head")
    assert info.value.key == "probe.head.radius"
    with pytest.raises(InputError) as info:
        SurfaceOfRevolution.from_dict({"meridian": [[0, 1], [0, 1]]}, key="cone")
    assert info.value.key == "cone.meridian"
    with pytest.raises(InputError):
        Slot((0, 0, 0), (1, 0, 0), (1, 1, 0), 0.01, 0.02, 0.05, 0.5)   # not perpendicular


def test_meridian_vertex_kinds_and_cone_parameters():
    s = SurfaceOfRevolution(((0.0, 1.0), (0.0, 0.5), (0.3, 0.2), (0.6, 0.2), (0.6, 0.1),
                             (0.6, 0.0)))
    kinds = s.packed[:, K.M_KIND]
    assert list(kinds) == [K.KIND_END, K.KIND_CONVEX, K.KIND_CONVEX, K.KIND_CONCAVE,
                           K.KIND_STRAIGHT, K.KIND_END]
    r_max, r_min, alpha, x_t = s.cone_parameters(1)
    assert (r_max, r_min) == (0.5, 0.2)
    assert alpha == pytest.approx(math.radians(45))
    assert x_t == pytest.approx(0.5)            # generators meet the axis beyond the small base
    assert s.feature_name(3) == "vertex 2 (rim)" and s.feature_name(6) == "face 3 (plane)"


def test_transforms_follow_eq_2_1():
    """p_PU = r + A^T p_link; vectors rotate with A^T; an axis stays a unit vector."""
    a = frames.head_dcm([0.1, -0.2, 0.05, 0.02, 0.3])
    r = np.array([-0.3, 0.01, 0.02])
    sph = Sphere((0.1, 0.0, 0.0), 0.05).transformed(r, a)
    assert np.allclose(sph.center, r + a.T @ [0.1, 0, 0])
    seg = Segment((0.1, 0.0, 0.0), (0.0, 0.2, 0.0)).transformed(r, a)
    assert np.allclose(seg.end, r + a.T @ [0.1, 0.2, 0.0])
    circ = Circle((0, 0, 0), (2.0, 0, 0), 0.4, on_active=True).transformed(r, a)
    assert np.linalg.norm(circ.axis) == pytest.approx(1.0)
    assert circ.packed[K.C_SIDE] == -1.0


def test_petal_has_2n_plus_1_generators_with_monotone_edge_lengths():
    fan = GeneratorFan.petal(n_bits=4, start_radius=0.42, start_x=-0.02, apex_x=0.9,
                             phi_min=-0.8, phi_max=0.8, length_max=0.25, length_min=0.05)
    lengths = np.linalg.norm(fan.vectors, axis=1)
    assert len(lengths) == 17 and lengths[0] == pytest.approx(0.05)
    assert np.all(np.diff(lengths[:9]) >= -1e-15) and np.all(np.diff(lengths[8:]) <= 1e-15)
    # every generator points at the apex
    ends = fan.starts + fan.vectors / lengths[:, None]
    assert np.allclose(np.cross(ends - fan.starts, [0.9, 0, 0] - fan.starts), 0, atol=1e-12)
