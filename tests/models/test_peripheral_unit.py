"""The peripheral unit as a docking unit: interface consistency with the kernel, batch rows
against single runs (bit for bit), loads and energy against hand computation, the leg-force
channels against the leg law (the first guess: tests/recon/test_peripheral_reconstruction.py)."""
import dataclasses

import numpy as np
import pytest

from models.peripheral._kernels import run_layout as R
from models.errors import InputError
from models.peripheral import simulate as ps
from models.peripheral.simulate import PeripheralBatch
from models.unit import all_channels, get_unit

U = get_unit("peripheral")
SHORT = 2.0   # [s] first contact at 0.575 s in the reference docking: contacts included


@pytest.fixture(scope="module")
def scn():
    return ps.load_scenario("reference")


@pytest.fixture(scope="module")
def run(scn):
    return U.simulate(scn, duration=SHORT)


def test_channels_units_and_kinds_match_the_kernel():
    assert set(U.channels) == set(ps.CHANNELS) - {"t"}
    for n, c in U.channels.items():
        ku = ps.UNITS[n]
        if ku == "1":
            assert c.kind == "binary" and c.unit == "" and c.file_unit == "0/1", n
        else:
            assert c.unit == ku, n
    assert U.parameters and tuple(U.parameters)[:12] == R.IC_NAMES
    assert U.events == ps.EVENT_NAMES
    for flag, ev in U.clock_events:
        assert U.channels[flag].binary and ev in U.events
    assert set(U.fitted_channels) <= set(U.sensor_channels)
    # shared names keep the probe-cone unit's unit and kind
    probe = get_unit("probe_cone")
    for n in set(U.channels) & set(probe.channels):
        assert (U.channels[n].unit, U.channels[n].kind) == \
            (probe.channels[n].unit, probe.channels[n].kind), n
    assert "ring_x" in all_channels()


def test_batch_rows_equal_single_runs_bit_for_bit(scn, run):
    bm = U.batch(scn, R.IC_NAMES, ["ring_x", "leg_3", "contact", "interface_force_x"],
                 duration=SHORT)
    d = np.array([0.0, 0.01, -0.005, -0.01, 0.002, 0.0, 0.003, 0.0, -0.002, 0.0, 0.0, 0.001])
    theta = np.vstack([bm.base, bm.base + d])
    out, ev, st = bm.evaluate(theta)
    assert list(st) == [0, 0]
    for row, x in enumerate(theta):
        tr = U.simulate(scn, dict(zip(R.IC_NAMES, x)), duration=SHORT) if row else run
        np.testing.assert_array_equal(bm.t, tr.t)
        for j, c in enumerate(bm.channels):
            np.testing.assert_array_equal(out[row, :, j], tr.channels[c])
        for j, e in enumerate(U.events):
            assert (np.isnan(ev[row, j]) and tr.events[e] is None) or ev[row, j] == tr.events[e]
    # a row's own end time: the first output sample at or after it, NaN after
    out2, _, _ = bm.evaluate(theta[:1], t_end=np.array([1.01]))
    k = int(np.ceil(1.01 * U.output_rate(scn) - 1e-9))
    np.testing.assert_array_equal(out2[0, :k + 1], out[0, :k + 1])
    assert np.isnan(out2[0, k + 1:]).all()


def test_brake_force_override_equals_a_scenario_with_that_brake(scn):
    f = 650.0
    bm = U.batch(scn, ["leg_brake_force", "leg_damping"], ["ring_x", "leg_1"], duration=SHORT)
    out, _, st = bm.evaluate(np.array([[f, 150.0]]))
    mech = dataclasses.replace(scn.mechanism, brake_force_compression=f,
                               brake_force_extension=f, damping=150.0)
    tr = U.simulate(dataclasses.replace(scn, mechanism=mech), duration=SHORT)
    assert st[0] == 0
    np.testing.assert_array_equal(out[0, :, 0], tr.channels["ring_x"])
    np.testing.assert_array_equal(out[0, :, 1], tr.channels["leg_1"])


def test_free_flight_before_start_batch_equals_simulate_and_refuses_bad_names(scn):
    # the readable layer and the batch run the same kernel on the same packed row: the
    # extension before t = 0 and the rows after it agree bit for bit (NaN where NaN)
    chans = ["ring_x", "leg_2", "capture", "active_rate_y", "passive_rate_z", "rel_pos_x"]
    bm = U.batch(scn, ["rel_vel_x"], chans, duration=0.3, t_pre=0.25)
    out, _, st = bm.evaluate(bm.base[None, :])
    tr = ps.simulate(scn, duration=0.3, t_pre=0.25)
    assert st[0] == 0 and bm.t[0] == pytest.approx(-0.26)   # 0.25 s up to the 0.02 s grid
    np.testing.assert_array_equal(bm.t, tr.t)
    for j, c in enumerate(chans):
        np.testing.assert_array_equal(out[0, :, j], tr.channels[c])
    with pytest.raises(InputError, match="t_pre"):
        U.batch(scn, ["rel_vel_x"], ["ring_x"], t_pre=-0.1)
    with pytest.raises(InputError):
        U.batch(scn, ["head_mass"], ["ring_x"])
    with pytest.raises(InputError):
        U.batch(scn, ["rel_vel_x"], ["stroke"])


def test_loads_and_energy_by_hand(run):
    c = run.channels
    h = {n: np.vstack([c[n], np.where(run.t <= 1.0, c[n], np.nan)])
         for n in U.load_channels + U.energy_channels}
    loads, lu = U.loads(h)
    energy, eu = U.energy(h)
    assert lu["peak_axial_force"] == "N" and lu["peak_bending_moment"] == "N*m"
    assert set(eu.values()) == {"J"}
    for row, end in ((0, len(run.t)), (1, int(np.flatnonzero(run.t <= 1.0)[-1]) + 1)):
        fx, fy, fz = (c[f"interface_force_{a}"][:end] for a in "xyz")
        mx, my, mz = (c[f"interface_moment_{a}"][:end] for a in "xyz")
        peak_ax = max(abs(v) for v in fx)
        peak_lat = max(float(np.sqrt(a * a + b * b)) for a, b in zip(fy, fz))
        peak_bend = max(float(np.sqrt(a * a + b * b)) for a, b in zip(my, mz))
        # hypot vs sqrt of sums: equal to rounding (1e-12 relative)
        assert loads["peak_axial_force"][row] == peak_ax
        assert loads["peak_lateral_force"][row] == pytest.approx(peak_lat, rel=1e-12)
        assert loads["peak_bending_moment"][row] == pytest.approx(peak_bend, rel=1e-12)
        assert loads["peak_torsion_moment"][row] == max(abs(v) for v in mx)
        assert energy["kinetic_initial"][row] == c["energy_kinetic"][0]
        for k in ("brake", "dampers", "contact", "latch"):
            assert energy[f"dissipated_{k}"][row] == c[f"energy_dissipated_{k}"][end - 1]
        assert energy["stored_final"][row] == c["energy_stored"][end - 1]
    assert peak_ax > 0.0 and energy["dissipated_contact"][0] > 0.0


def _leg_spring(m, c):
    """The caged preloaded leg spring written out: ``k_p c`` inside the cage, ``sign(c) F0 +
    k (c - sign(c) c_p)`` beyond [N] (below the brake force)."""
    cp = m.spring_preload / m.preload_stiffness
    return np.where(np.abs(c) <= cp, m.preload_stiffness * c,
                    np.sign(c) * m.spring_preload + m.spring_rate * (c - np.sign(c) * cp))


def _before_slip(m, spring):
    """Number of leading samples before the spring force first reaches 0.9 of a brake
    force (the brake shifts the free length from there on)."""
    below = np.abs(spring) < 0.9 * min(m.brake_force_compression, m.brake_force_extension)
    return below.size if below.all() else int(np.argmin(below))


@pytest.mark.parametrize("damping", [0.0, None])
def test_leg_force_channels_follow_the_leg_law_until_the_first_brake_slip(scn, damping):
    """``leg_force_i`` is the axial force of leg ``i`` (compression positive): the caged
    preloaded spring of the compression ``c = L0 - L`` plus the damper ``-c_d L'``, written
    out here (:func:`_leg_spring`) from the recorded lengths, on every sample before any
    leg's spring reaches its brake force (no shift of the free length yet).

    Without dampers the channel is the spring law to rounding (1e-9 N). With the preset's
    dampers the damper force is checked through its integral, ``int (F - spring) dt =
    -c_d (L(t) - L(0))`` (trapezoid at 2 kHz; the impacts make ``L'`` kink, which central
    differences of ``L`` would not resolve): within 1e-3 N s plus 1e-3 of ``c_d |dL|``."""
    m = scn.mechanism
    if damping is not None:
        m = dataclasses.replace(m, damping=damping)
        scn = dataclasses.replace(scn, mechanism=m)
    tr = U.simulate(scn, duration=1.6, rate=2000.0)
    L0 = m.free_lengths()
    t = tr.t
    checked = 0
    for i in range(6):
        L = tr.channels[f"leg_{i + 1}"]
        F = tr.channels[f"leg_force_{i + 1}"]
        spring = _leg_spring(m, L0[i] - L)
        n = _before_slip(m, spring)
        assert np.max(np.abs(F[:n])) > 10.0     # the legs are loaded before they slip
        checked += n
        if m.damping == 0.0:
            np.testing.assert_allclose(F[:n], spring[:n], atol=1e-9, rtol=0)
            continue
        rest = F[:n] - spring[:n]
        integral = np.concatenate(
            ([0.0], np.cumsum(0.5 * (rest[1:] + rest[:-1]) * np.diff(t[:n]))))
        dl = L[:n] - L[0]
        np.testing.assert_allclose(integral, -m.damping * dl,
                                   atol=1e-3 + 1e-3 * m.damping * np.max(np.abs(dl)))
    assert checked > 6 * 1000
    assert all(tr.channels[f"leg_force_{i}"][0] == 0.0 for i in range(1, 7))
