"""The fitted span (recon.span): which samples are compared with the model, that none outside
a row's simulated span ever is, and realistic records (longer than the model, starting before
it, on their own clock and time bases)."""
import json

import numpy as np
import pytest

from models.errors import InputError
from models.probe_cone import preset_path
from recon.flight import flight_problem
from recon.observation import ChannelModel, ObservationModel, Simulated, SpanError
from recon.problem import parameter_space
from recon.span import choose_span, first_edge
from recon.telemetry import Telemetry
from telemetry_samples import SAMPLES_DIR
from tests.recon._toy import linear_problem

REALISTIC = SAMPLES_DIR / "flights" / "realistic"
REFERENCE = preset_path("reference")


def _record():
    """10 s at 10 Hz: stroke, a contact flag rising at 3.05 s, a capture flag at 4.05 s."""
    t = np.arange(100) * 0.1
    return Telemetry.from_arrays(t, {"stroke": np.sin(t), "contact": (t > 3.0).astype(float),
                                     "capture": (t > 4.0).astype(float)}, source="rec")


def _space(clock=None, latency=None):
    table = {"a": {"lower": 0.0, "upper": 1.0}}
    if clock is not None:
        table["clock_offset"] = clock
    if latency is not None:
        table["stroke_latency"] = latency
    return parameter_space(table)


OBS = ObservationModel((ChannelModel("stroke", 0.1), ChannelModel("capture", 0.01)))


def test_span_rules_and_counts():
    rec = _record()
    span = choose_span(rec, _space({"lower": -1.0, "upper": 2.0}), OBS)
    # whole record; the simulation must start up to 2 s after the record's first sample
    # (free-flight extension) and reach its end for the earliest clock
    assert (span.start, span.stop) == (0.0, pytest.approx(9.9))
    assert span.pre == pytest.approx(2.0) and span.duration == pytest.approx(10.9)
    assert span.left_out == 0 and span.samples["stroke"]["fitted"] == 100
    assert span.reasons == {"start": "the record's first sample",
                            "stop": "the record's last sample"}
    # 1.5 s after capture (edge at 4.05 s, the midpoint of its bracketing samples), from
    # 1 s before first contact
    span = choose_span(rec, _space({"lower": -1.0, "upper": 2.0}), OBS, after_capture=1.5,
                       before_contact=1.0)
    assert span.stop == pytest.approx(5.55) and span.start == pytest.approx(2.05)
    assert "capture edge" in span.reasons["stop"] and "contact edge" in span.reasons["start"]
    n_in = np.count_nonzero((rec.t >= 2.05) & (rec.t <= 5.55))
    assert span.samples["stroke"] == {"fitted": n_in, "before": 21, "after": 100 - 21 - n_in}
    # a latency prior widens what the simulation must cover, on both sides
    span = choose_span(rec, _space({"lower": -1.0, "upper": 2.0},
                                   {"lower": 0.0, "upper": 0.05}), OBS)
    assert span.pre == pytest.approx(2.05) and span.duration == pytest.approx(10.9)
    # a fixed simulation length: the last stamp every allowed clock keeps inside it
    span = choose_span(rec, _space({"lower": -1.0, "upper": 2.0}), OBS, duration=6.0)
    assert span.stop == pytest.approx(5.0) and "6-s simulation" in span.reasons["stop"]
    # sim_end: how far each row must run on its own clock
    np.testing.assert_allclose(span.sim_end(np.array([-1.0, 0.5]), np.zeros(2)), [6.0, 4.5])
    # an empty span is an input error naming the record
    with pytest.raises(InputError, match="empty") as e:
        choose_span(rec, _space({"lower": -1.0, "upper": 2.0}), OBS, duration=0.5)
    assert e.value.source == "rec"


def test_sample_outside_the_simulated_span_is_an_error_not_a_held_value():
    """A forward model whose grid misses part of the fitted span (here: stops 0.5 s early)
    must not be compared with a held end value: the residuals raise SpanError."""
    prob, *_ = linear_problem()
    inner = prob.forward

    def short(params, names, t_end=None):
        sim = inner(params, names)
        keep = sim.t <= prob.span.stop - 0.5
        return Simulated(sim.t[keep], {k: v[:, keep] for k, v in sim.channels.items()})

    prob.forward = short
    with pytest.raises(SpanError, match="outside row 0's simulated span"):
        prob.residuals(prob.space.start())


def test_values_beyond_a_rows_end_never_enter_the_cost():
    """The linear toy simulates 3 s; its record is 2 s long. Whatever the simulation says after
    the fitted span (1e9, NaN), the residuals are unchanged."""
    prob, *_ = linear_problem()
    x = prob.space.start()
    r0 = prob.residuals(x)
    inner = prob.forward
    for poison in (1e9, np.nan):
        def poisoned(params, names, t_end=None, poison=poison):
            sim = inner(params, names)
            late = sim.t > prob.span.stop + 1e-9
            return Simulated(sim.t, {k: np.where(late, poison, v) for k, v in
                                     sim.channels.items()})

        prob.forward = poisoned
        np.testing.assert_array_equal(prob.residuals(x), r0)


def test_realistic_flight_truth_fits_at_every_allowed_clock():
    """The shipped realistic nominal flight (record from 8 s before the start plane to 22 s
    after capture, vehicle clock starting at 412.35 s, gyros on their own time base): the
    span is 3 s before contact to 3 s after capture; every row is simulated only as far as
    its clock needs (its last finite output within one output step after the span's end on
    its clock), and at both ends of the clock prior every fitted sample is covered (finite
    residuals, no SpanError). At the truth the whitened residuals are unit noise (mean square
    0.8-1.2; quantized stroke lower)."""
    prob, cfg, _ = flight_problem(REALISTIC / "nominal.parquet", REFERENCE,
                                  config=REALISTIC / "run.toml")
    truth = json.loads((REALISTIC / "nominal.truth.json").read_text())["parameters"]
    t_con = first_edge(prob.record, "contact")
    t_cap = first_edge(prob.record, "capture")
    assert prob.span.start == pytest.approx(t_con - 3.0)
    assert prob.span.stop == pytest.approx(t_cap + 3.0)
    assert prob.span.samples["stroke"]["before"] > 0 and prob.span.samples["stroke"]["after"] > 0
    clock = prob.space["clock_offset"].prior
    assert clock.anchor == "contact" and clock.anchor_t == pytest.approx(t_con)
    assert (clock.lower, clock.upper) == (pytest.approx(t_con - 7.5), pytest.approx(t_con))
    x = np.array([truth[n] for n in prob.names])
    k = prob.names.index("clock_offset")
    xs = np.repeat(x[None], 3, axis=0)
    xs[1, k], xs[2, k] = prob.space.lower[k], prob.space.upper[k]
    r = prob.residuals(xs)
    assert np.all(np.isfinite(r))
    assert 0.8 < np.mean(r[0] ** 2) < 1.2
    sim, _ = prob.simulate(xs)
    stroke = sim.channels["stroke"]
    need = prob.sim_end(prob.space.full(xs))
    for i in range(3):
        last = sim.t[np.flatnonzero(np.isfinite(stroke[i]))[-1]]
        assert need[i] <= last + 1e-9 < need[i] + 0.01 + 1e-9
    # the free-flight extension reaches back to the span's start for the latest clock
    assert sim.t[0] <= prob.span.start - prob.space.upper[k] + 1e-9


def test_telemetry_on_separate_time_bases_gives_the_same_problem(tmp_path):
    """The realistic record split in two files (mechanism recorder, gyros on their own clock
    ticks) merges back to the same samples and the same residuals."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(REALISTIC / "nominal.parquet")  # columns keep their unit metadata
    gyros = [c for c in table.column_names if "_rate_" in c]
    for name, cols in (("mech", [c for c in table.column_names if c not in gyros]),
                       ("gyro", ["t", *gyros])):
        part = table.select(cols)
        has = part.drop(["t"]).to_pandas().notna().any(axis=1).to_numpy()
        pq.write_table(part.filter(pa.array(has)), tmp_path / f"{name}.parquet")
    both = [tmp_path / "mech.parquet", tmp_path / "gyro.parquet"]
    p1 = flight_problem(REALISTIC / "nominal.parquet", REFERENCE, config=REALISTIC / "run.toml").problem
    p2 = flight_problem(both, REFERENCE, config=REALISTIC / "run.toml").problem
    assert p2.record.source.endswith("gyro.parquet") and " + " in p2.record.source
    x = p1.space.start()
    np.testing.assert_array_equal(p1.residuals(x), p2.residuals(x))
    assert p1.span.samples == p2.span.samples


def test_anchored_prior_without_its_edge_names_the_key_and_the_record(tmp_path):
    from recon.io import load_toml

    run = load_toml(REALISTIC / "run.toml")
    rec = _record()
    no_contact = Telemetry.from_arrays(rec.t, {"stroke": rec.channels["stroke"],
                                               "capture": rec.channels["capture"]},
                                       source="nocontact.parquet")
    from recon.config import RunConfig

    cfg = RunConfig.from_dict(run)
    with pytest.raises(InputError, match="no rising edge of 'contact'") as e:
        cfg.space_for(no_contact)
    assert e.value.key == "parameters.clock_offset.anchor"
    assert e.value.source == "nocontact.parquet"


@pytest.mark.parametrize("spec, key, what", [
    ({"rel_vel_x": {"anchor": "contact", "lower": 0.0, "upper": 1.0}},
     "parameters.rel_vel_x.anchor", "only the clock offset"),
    ({"clock_offset": {"anchor": 3, "lower": -1.0, "upper": 1.0}},
     "parameters.clock_offset.anchor", "name of a telemetry flag"),
    ({"clock_offset": {"anchor": "contact", "prior": "lognormal", "median": 1.0,
                       "sigma": 0.1}}, "parameters.clock_offset.prior", "log-normal"),
    ({"clock_offset": {"lower": -1.0, "upper": 1.0, "step": 5.0}},
     "parameters.clock_offset.step", "smaller than the prior's range"),
])
def test_anchor_and_step_errors(spec, key, what):
    with pytest.raises(InputError, match=what) as e:
        parameter_space(spec)
    assert e.value.key == key


def test_anchored_prior_counts_from_the_edge_and_records_it():
    sp = parameter_space(
        {"clock_offset": {"anchor": "contact", "prior": "normal", "mean": -2.0, "sd": 0.5,
                          "lower": -4.0, "upper": 0.0, "step": 0.005, "unit": "s"}},
        anchors={"contact": 10.0})
    p = sp["clock_offset"]
    assert (p.prior.lower, p.prior.upper, p.prior.a, p.prior.b) == (6.0, 10.0, 8.0, 0.5)
    assert p.value == 8.0 and p.step == pytest.approx(5e-3)
    assert p.prior.to_dict()["anchor"] == {"flag": "contact", "t": 10.0}
    np.testing.assert_allclose(sp.fd_steps(1e-2), [5e-3])
    # without a record the numbers stay offsets from the edge (configuration checks)
    assert parameter_space({"clock_offset": {"anchor": "contact", "lower": -4.0,
                                                      "upper": 0.0}})["clock_offset"].prior.upper == 0.0


def test_merge_refuses_a_channel_in_two_files():
    a = Telemetry.from_arrays([0.0, 1.0], {"stroke": [0.0, 1.0]}, source="a.parquet")
    b = Telemetry.from_arrays([0.5, 1.5], {"stroke": [0.0, 1.0]}, source="b.parquet")
    with pytest.raises(InputError, match="also in a.parquet") as e:
        Telemetry.merge([a, b])
    assert e.value.source == "b.parquet" and e.value.key == "stroke"
    c = Telemetry.from_arrays([0.5, 1.5], {"active_rate_x": [2.0, 3.0]}, source="c.parquet")
    m = Telemetry.merge([a, c])
    np.testing.assert_array_equal(m.t, [0.0, 0.5, 1.0, 1.5])
    np.testing.assert_array_equal(m.samples("stroke")[0], [0.0, 1.0])
    np.testing.assert_array_equal(m.samples("active_rate_x")[1], [2.0, 3.0])


def test_problem_default_span_is_the_whole_record():
    prob, *_ = linear_problem()
    assert prob.span.start == prob.record.t[0] and prob.span.stop == prob.record.t[-1]
    assert prob.telemetry.t.size == prob.record.t.size and prob.span.left_out == 0
