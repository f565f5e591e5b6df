"""The peripheral unit as a docking unit: interface consistency with the kernel, batch rows
against single runs (bit for bit), loads and energy against hand computation, first guess."""
import dataclasses

import numpy as np
import pytest

from models._kernels import peripheral_run_layout as R
from models.errors import InputError
from models.peripheral import simulate as ps
from models.peripheral.unit import PeripheralBatch, telemetry_guess
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


def test_first_guess_rates_closed_form():
    """Relative rate = G1 w1 - G2 w2 with the relative attitude zero (docstring)."""
    rng = np.random.default_rng(3)
    t = np.linspace(0.0, 1.0, 101)
    w1, w2 = rng.normal(size=3) * 0.01, rng.normal(size=3) * 0.01
    a = 0.3
    G1 = np.array([[1, 0, 0], [0, np.cos(a), np.sin(a)], [0, -np.sin(a), np.cos(a)]])
    ch = {f"active_rate_{x}": np.full(t.size, w1[i]) for i, x in enumerate("xyz")}
    ch.update({f"passive_rate_{x}": np.full(t.size, w2[i]) for i, x in enumerate("xyz")})
    g = telemetry_guess(t, ch, G1, None)
    np.testing.assert_allclose([g[f"rel_rate_{x}"] for x in "xyz"], G1 @ w1 - w2, atol=1e-15)
    assert "rel_vel_x" not in g


def test_first_guess_closing_speed_from_stroke_after_capture(scn):
    """Once the latches hold the rings together the ring strokes at the closing speed:
    the fastest stroke rate within 0.3 s after capture lies within the simulated rel_vel_x
    over that window (widened by 3 %, the stroke rate's numerical differentiation at 200 Hz
    and the contact compliance), and below the initial 0.1 m/s by what the petal contacts
    took before capture."""
    tr = U.simulate(scn, duration=2.5, rate=200.0)
    g = telemetry_guess(tr.t, tr.channels)
    assert g["t_contact"] == pytest.approx(tr.events["first_contact"], abs=0.005)
    sel = (tr.t >= g["t_capture"]) & (tr.t <= g["t_capture"] + 0.3)
    v = tr.channels["rel_vel_x"][sel]
    assert 0.97 * v.min() <= g["rel_vel_x"] <= 1.03 * v.max()
    assert 0.6 * 0.1 < g["rel_vel_x"] < 0.1
