"""Every command, fed bad input through the command line.

For each case: the exit code (2 for the user's input, 65 for data that read but cannot be
trusted: README "Exit codes"), exactly one ``error:`` line on stderr naming the file or option
and, where the fault sits in one place, its row, column or key; no traceback, no
RuntimeWarning; and the output location unchanged (nothing written, no staging left).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "telemetry_samples"
FLIGHT = SAMPLES / "flights" / "nominal.parquet"
SCENARIO = ROOT / "models" / "probe_cone" / "presets" / "reference.toml"
RUN = SAMPLES / "flights" / "run.toml"
STATIC = SAMPLES / "static" / "lateral_double_loop.csv"
ELEMENT = SAMPLES / "static" / "lateral_double_loop.start.toml"
RESONANCE = SAMPLES / "resonance" / "dead_zone.csv"
COUPLING = SAMPLES / "resonance" / "coupling_l3.csv"
COUPLING_MODES = SAMPLES / "resonance" / "coupling_l3.modes.toml"
RIG = SAMPLES / "rig" / "actuator.toml"
RIG_RECORD = SAMPLES / "rig" / "step.parquet"
RIG_COMMAND = SAMPLES / "rig" / "command_lift.csv"
APPENDAGE = ROOT / "models" / "presets" / "appendage_pulse.toml"


# ---------------------------------------------------------------------------------------------
# bad files, made from a good one of the command's own kind
def _frame(good: Path) -> pd.DataFrame:
    """The good file's table in SI with plain column names (SI needs no unit in a file: a
    rewritten Parquet file would otherwise lose its unit metadata)."""
    from recon.io import read_table

    return read_table(good)[0]


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path


def _first_data_column(frame: pd.DataFrame) -> str:
    return next(c for c in frame.columns if c != "t")


def make_bad(kind: str, good: Path, tmp: Path) -> tuple[Path, str | None]:
    """A bad file of ``kind`` made from ``good``; returns it and a word its error must name
    (the column, or None when only the file can be named)."""
    suffix = good.suffix
    p = tmp / f"bad_{kind}{suffix}"
    if kind == "missing":
        return tmp / f"none{suffix}", None
    if kind == "empty":
        p.write_bytes(b"")
        return p, None
    if kind == "directory":
        p.mkdir()
        return p, None
    if kind == "truncated":
        data = good.read_bytes()
        p.write_bytes(data[: len(data) // 3])
        return p, None
    if kind == "text_as_parquet":
        p = tmp / "text.parquet"
        p.write_text("t,stroke\n0,1\n")
        return p, None
    if kind == "binary_as_csv":
        p = tmp / "binary.csv"
        p.write_bytes(bytes(range(256)) * 4)
        return p, None
    frame = _frame(good)
    col = _first_data_column(frame)
    if kind == "non_utf8_header":
        p = tmp / "latin.csv"
        text = frame.head(20).to_csv(index=False)
        p.write_bytes(text.replace(col, col + "\xe9", 1).encode("latin-1"))
        return p, None
    if kind == "no_t":
        return _write(frame.rename(columns={"t": "time_x"}), p), "'t'"
    tcol = "t"
    k = min(5, len(frame) - 1)
    if kind == "backwards_time":
        frame.loc[k, tcol] = frame.loc[k - 2, tcol]
        return _write(frame, p), "'t'"
    if kind == "duplicate_time":
        frame.loc[k, tcol] = frame.loc[k - 1, tcol]
        return _write(frame, p), "'t'"
    if kind == "all_nan":
        frame[col] = np.nan
        return _write(frame, p), col
    if kind == "inf":
        frame[col] = frame[col].astype(float)
        frame.loc[min(3, len(frame) - 1), col] = np.inf
        return _write(frame, p), col
    if kind == "huge":
        frame[col] = frame[col].astype(float)
        frame.loc[min(3, len(frame) - 1), col] = 1e308
        return _write(frame, p), col
    if kind == "one_row":
        return _write(frame.head(1), p), None
    if kind == "unknown_unit":
        p = tmp / "unit.csv"
        _write(frame.rename(columns={col: f"{col} [blorp]"}), p)
        return p, col
    if kind == "wrong_unit":
        p = tmp / "unit.csv"
        _write(frame.rename(columns={col: f"{col} [kg*s]"}), p)
        return p, col
    if kind == "duplicate_column":
        # a CSV header that names one column twice (pandas would rename the second "x.1")
        p = tmp / "dup.csv"
        other = next((c for c in frame.columns if c not in ("t", col)), "t")
        lines = frame.to_csv(index=False).splitlines()
        lines[0] = ",".join(col if c == other else c for c in lines[0].split(","))
        p.write_text("\n".join(lines) + "\n")
        return p, col
    if kind == "duplicate_column_parquet":
        # Arrow lets a schema name a column twice (pandas would not write it)
        import pyarrow as pa
        import pyarrow.parquet as pq

        p = tmp / "dup.parquet"
        other = next((c for c in frame.columns if c not in ("t", col)), "t")
        names = [col if c == other else c for c in frame.columns]
        pq.write_table(pa.table([pa.array(frame[c].to_numpy()) for c in frame.columns],
                                names=names), p)
        return p, col
    if kind == "datetime_time":
        # a Parquet time column of date-times (pandas would read integer nanoseconds)
        p = tmp / "datetime.parquet"
        frame["t"] = pd.to_datetime(frame["t"], unit="s")
        return _write(frame, p), "'t'"
    raise ValueError(kind)


FILE_KINDS = ("missing", "empty", "directory", "truncated", "text_as_parquet", "binary_as_csv",
              "non_utf8_header", "no_t", "backwards_time", "duplicate_time", "all_nan", "inf",
              "huge", "one_row", "unknown_unit", "wrong_unit", "duplicate_column",
              "duplicate_column_parquet",
              "datetime_time")
#: a static load-deflection record has no time column
TIMELESS = {"identify hysteresis"}

#: command -> (good data file, arguments around it: DATA and OUT placeholders)
DATA_COMMANDS = {
    "validate": (FLIGHT, ["validate", "DATA"]),
    "reconstruct": (FLIGHT, ["reconstruct", "DATA", "--scenario", SCENARIO, "--config", RUN,
                             "-o", "OUT", "--mcmc", "never"]),
    "identify hysteresis": (STATIC, ["identify", "hysteresis", "DATA", "--element", ELEMENT,
                                     "-o", "OUT.json"]),
    "identify resonance": (RESONANCE, ["identify", "resonance", "DATA", "-o", "OUT.json"]),
    "identify resonance-coupling": (COUPLING, ["identify", "resonance-coupling", "DATA",
                                               "--modes", COUPLING_MODES, "-o", "OUT.json"]),
    "identify rig": (RIG_RECORD, ["identify", "rig", "DATA", "--config", RIG, "-o", "OUT"]),
    "simulate rig": (RIG_COMMAND, ["simulate", "rig", RIG, "--command", "DATA",
                                   "-o", "OUT.csv"]),
}


def _args(template, data, out):
    return [str(data) if a == "DATA" else str(out) + a[3:] if isinstance(a, str)
            and a.startswith("OUT") else str(a) for a in template]


def check_one_error(r, *, code, names: list[str], tmp_path: Path, before: set[str]):
    err = r.stderr
    assert r.exit_code == code, (r.exit_code, err, r.stdout)
    assert "Traceback" not in err and "Traceback" not in r.stdout
    assert "RuntimeWarning" not in err and "Warning:" not in err
    errors = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, err
    for word in names:
        assert word in errors[0], (word, errors[0])
    assert "internal failure" not in errors[0]
    now = {p.name for p in tmp_path.iterdir()}
    assert now == before, f"output location changed: {sorted(now - before)}"


@pytest.mark.parametrize("kind", FILE_KINDS)
@pytest.mark.parametrize("command", sorted(DATA_COMMANDS))
def test_bad_data_file(cli_run, tmp_path, command, kind):
    good, template = DATA_COMMANDS[command]
    if command in TIMELESS and kind in ("no_t", "backwards_time", "duplicate_time",
                                        "datetime_time"):
        pytest.skip("a static record has no time column")
    work = tmp_path / "in"
    work.mkdir()
    bad, column = make_bad(kind, good, work)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    before = {p.name for p in out_dir.iterdir()}
    r = cli_run(*_args(template, bad, out_dir / "result"))
    # the path is wrong: 2; the file is there but cannot be read or trusted: 65, in every
    # command alike (README, "Exit codes")
    code = 2 if kind in ("missing", "directory") else 65
    names = [bad.name] + ([column] if column else [])
    if command == "validate":     # findings: one error line (warnings may precede)
        names = [bad.name]
    check_one_error(r, code=code, names=names, tmp_path=out_dir, before=before)


# ---------------------------------------------------------------------------------------------
# bad TOML files
def _edit(src: Path, dst: Path, old: str, new: str) -> Path:
    text = src.read_text()
    assert old in text, (src, old)
    dst.write_text(text.replace(old, new, 1))
    return dst


TOML_CASES = {
    # name: (file to corrupt, replacement, the key the error must name)
    "syntax": ("[optimizer]", "[optimizer", "line"),
    "unknown_key": ("[optimizer]", "[optimizer]\nbogus = 1", "optimizer.bogus"),
    "wrong_type": ("max_nfev = 100", 'max_nfev = "lots"', "optimizer.max_nfev"),
    "absurd": ("max_nfev = 100", "max_nfev = 100000000000000000", "optimizer.max_nfev"),
    "unknown_moves": ("walkers = 32", 'walkers = 32\nmoves = "gibbs"', "sampler.moves"),
    # numbers of the [parameters] table: absurd magnitudes and the physical ranges of the
    # unit's parameters, as scenario numbers have them
    "huge_sd": ("[parameters.rel_pos_y]\nlower = -0.3\nupper = 0.3",
                '[parameters.rel_pos_y]\nprior = "normal"\nmean = 0.0\nsd = 1e300',
                "parameters.rel_pos_y.sd"),
    "huge_integer": ("upper = 0.3", "upper = 1" + "0" * 400, "parameters.rel_pos_y.upper"),
    "negative_force": ("[sampler]", '[parameters.brake_slip_force]\nlower = -500.0\n'
                       'upper = 500.0\nunit = "N"\n\n[sampler]',
                       "parameters.brake_slip_force.lower"),
    "slow_model_rate": ("rate = 100.0", "rate = 0.001", "model.rate"),
}
SCENARIO_CASES = {
    "negative_mass": ("mass = 7200.0", "mass = -7200.0", "active.mass"),
    "huge_mass": ("mass = 7200.0", "mass = 1e308", "active.mass"),
    "infinite_mass": ("mass = 7200.0", "mass = inf", "finite number"),
    "impossible_inertia": ("inertia = [3800.0, 27000.0, 27000.0]",
                           "inertia = [3800.0, 2700.0, 27000.0]", "triangle inequality"),
    "wrong_type": ("spring_force = 800.0", 'spring_force = "x"', "spring_force"),
    "syntax": ("[probe]", "[probe", "line"),
}


@pytest.mark.parametrize("case", sorted(TOML_CASES))
def test_bad_run_configuration(cli_run, tmp_path, case):
    old, new, key = TOML_CASES[case]
    cfg = _edit(RUN, tmp_path / "run.toml", old, new)
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run("reconstruct", FLIGHT, "--scenario", SCENARIO, "--config", cfg,
                "-o", out / "res", "--mcmc", "never")
    check_one_error(r, code=2, names=["run.toml", key], tmp_path=out, before=set())


def test_too_few_walkers_are_refused_before_the_fit(cli_run, tmp_path):
    """emcee needs two walkers per free parameter: ``--walkers 3`` and ``walkers = 3`` in
    the run configuration are refused before anything runs (and by ``validate --scenario
    --config``), naming the option or the key; nothing is written (no partial run that
    ``--resume`` could not continue)."""
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run("reconstruct", FLIGHT, "--scenario", SCENARIO, "--config", RUN,
                "-o", out / "res", "--walkers", "3")
    check_one_error(r, code=2, names=["--walkers", "3 walkers", "at least"], tmp_path=out,
                    before=set())
    cfg = _edit(RUN, tmp_path / "run.toml", "walkers = 32", "walkers = 3")
    r = cli_run("validate", FLIGHT, "--scenario", SCENARIO, "--config", cfg)
    assert r.exit_code != 0 and "sampler.walkers" in r.stderr and "run.toml" in r.stderr


@pytest.mark.parametrize("command", ["simulate docking", "reconstruct"])
@pytest.mark.parametrize("case", sorted(SCENARIO_CASES))
def test_bad_scenario(cli_run, tmp_path, case, command):
    old, new, key = SCENARIO_CASES[case]
    scn = _edit(SCENARIO, tmp_path / "scn.toml", old, new)
    out = tmp_path / "o"
    out.mkdir()
    if command == "simulate docking":
        r = cli_run("simulate", "docking", scn, "-o", out / "x.parquet")
    else:
        r = cli_run("reconstruct", FLIGHT, "--scenario", scn, "--config", RUN,
                    "-o", out / "res", "--mcmc", "never")
    check_one_error(r, code=2, names=["scn.toml", key], tmp_path=out, before=set())


OPTION_CASES = [
    # (arguments, the option the error must name)
    (["simulate", "docking", SCENARIO, "-o", "OUT.parquet", "--rate", "inf"], "--rate"),
    (["simulate", "docking", SCENARIO, "-o", "OUT.parquet", "--rate", "1e-9"], "--rate"),
    (["simulate", "docking", SCENARIO, "-o", "OUT.parquet", "--duration", "1e308"],
     "--duration"),
    (["simulate", "appendage", APPENDAGE, "-o", "OUT.csv", "--rtol", "-1"], "--rtol"),
    (["simulate", "appendage", APPENDAGE, "-o", "OUT.csv", "--atol", "nan"], "--atol"),
    (["simulate", "rig", RIG, "--command", RIG_COMMAND, "-o", "OUT.csv", "--t-end", "-2"],
     "--t-end"),
    (["reconstruct", FLIGHT, "--scenario", SCENARIO, "-o", "OUT", "--mcmc-below-ess", "0"],
     "--mcmc-below-ess"),
    (["reconstruct", FLIGHT, "--scenario", SCENARIO, "-o", "OUT", "--resume"], "--resume"),
    (["simulate", "appendage", APPENDAGE, "-o", "OUT.txt"], "--output"),
    (["identify", "resonance", RESONANCE, "-o", "OUT.json", "--frequency", "fast"],
     "--frequency"),
    # a hold time longer than the record: the option's fault, not the data's
    (["identify", "resonance", RESONANCE, "-o", "OUT.json", "--skip", "1e6"], "--skip"),
    (["study", "calibration", "--scenario", SCENARIO, "--config", RUN, "--flights", "4",
      "-o", "OUT", "--only", "2-9"], "--only"),
    (["study", "merge", SAMPLES, SAMPLES / "flights", "-o", "OUT"], "calibration.json"),
]


@pytest.mark.parametrize("case", range(len(OPTION_CASES)))
def test_bad_option(cli_run, tmp_path, case):
    args, option = OPTION_CASES[case]
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run(*_args(args, None, out / "x"))
    check_one_error(r, code=2, names=[option], tmp_path=out, before=set())


def test_a_static_record_whose_deformation_never_varies_is_refused(cli_run, tmp_path):
    frame = pd.read_csv(STATIC, comment="#")
    frame.iloc[:, 0] = 0.0
    out = tmp_path / "o"
    out.mkdir()
    frame.to_csv(tmp_path / "flat.csv", index=False)
    r = cli_run("identify", "hysteresis", tmp_path / "flat.csv", "--element", ELEMENT,
                "-o", out / "r.json")
    check_one_error(r, code=65, names=["flat.csv", "'q'", "does not vary"], tmp_path=out,
                    before=set())


def test_a_resonance_record_without_oscillation_is_blamed_on_its_file(cli_run, tmp_path):
    frame = pd.read_csv(RESONANCE)
    frame.iloc[:, 1:] = 0.0
    bad = tmp_path / "flat.csv"
    frame.to_csv(bad, index=False)
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run("identify", "resonance", bad, "-o", out / "r.json")
    check_one_error(r, code=65, names=["flat.csv", "force", "oscillating"], tmp_path=out,
                    before=set())


def test_initial_conditions_are_blamed_on_their_file(cli_run, tmp_path):
    from recon.io import load_toml

    ics = load_toml(SCENARIO)["initial"]
    ics["rel_vel_x"] = "fast"
    import tomli_w

    path = tmp_path / "ics.toml"
    path.write_bytes(tomli_w.dumps(ics).encode())
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run("simulate", "docking", SCENARIO, "--initial", path, "-o", out / "x.parquet")
    check_one_error(r, code=2, names=["ics.toml", "rel_vel_x"], tmp_path=out, before=set())
    shutil.rmtree(out)


def test_the_readme_exit_code_table_is_what_the_code_does():
    """The README's table of exit codes lists exactly the codes the command line uses, with
    the meanings the tests assert (2 the user's input, 65 untrustworthy data, 74 no room,
    75 a busy output; tests/recon/app/test_outputs_faults.py)."""
    import re
    import signal

    from models.errors import DataError, InputError, OutputError
    from recon.app.cli import EXIT_STATUS
    from recon.app.outputs import OutputBusy

    text = (ROOT / "README.md").read_text()
    table = text[text.index("### Exit codes and errors"):text.index("### Outputs")]
    rows = {int(m.group(1)): m.group(2) for m in re.finditer(r"^\| (\d+) \| ([^|]+)\|", table,
                                                           re.M)}
    assert set(rows) == {0, 1, 2, 3, 4, 65, 74, 75, 130, 143}
    assert InputError.exit_code == 2 and "user's input" in rows[2]
    assert OutputError.exit_code == 74 and "room" in rows[74]
    assert OutputBusy.exit_code == 75 and "another run" in rows[75]
    assert 128 + signal.SIGTERM == 143 and "SIGTERM" in rows[143]
    assert DataError.exit_code == 65 and "cannot be read or trusted" in rows[65]
    assert EXIT_STATUS == {"implausible": 3, "failed": 4}
    assert "implausible" in rows[3] and "failed" in rows[4]


def test_a_report_of_an_incomplete_result_says_what_is_missing(cli_run, tmp_path):
    """The rig report of a directory whose fitted.parquet went missing says so at the top
    instead of silently dropping the record-against-model sections."""
    out = tmp_path / "rig"
    r = cli_run("-q", "identify", "rig", RIG_RECORD, "--config", RIG, "-o", out)
    assert r.exit_code == 0, r.output
    import json

    doc = json.loads((out / "result.json").read_text())
    assert doc["files"] == ["fitted.parquet"] and set(doc["digests"]) == {"fitted.parquet"}
    # a file cut short after the run (still there, not the bytes written) is named too
    data = (out / "fitted.parquet").read_bytes()
    (out / "fitted.parquet").write_bytes(data[: len(data) // 2])
    r = cli_run("report", out, "--format", "html")
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "Incomplete result directory: fitted.parquet (changed)" in html
    (out / "fitted.parquet").unlink()
    r = cli_run("report", out, "--format", "html")
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "Incomplete result directory: fitted.parquet (missing)" in html
    assert html.index("Incomplete result directory") < html.index("<h2>Parameters")


def test_a_failing_truth_comparison_does_not_fail_the_resonance_report(cli_run, tmp_path):
    """A truth file beside a record that names a law the comparison does not know: the
    identification and its report succeed; the report says the truth was not compared."""
    rec = tmp_path / "dead_zone.csv"
    rec.write_bytes(RESONANCE.read_bytes())
    truth = tmp_path / "dead_zone.truth.json"
    truth.write_text('{"parameters": {"phi": "cubic", "H": "linear", "h": 1.0}}')
    r = cli_run("-q", "identify", "resonance", rec, "-o", tmp_path / "out.json")
    assert r.exit_code == 0, r.output
    html = (tmp_path / "out.html").read_text()
    assert "Largest relative error against the truth" not in html


@pytest.mark.parametrize(("src", "old", "new", "key"), [
    (RIG, "supply_pressure = ", "supply_pressure = 1e300 # ", "supply_pressure"),
    (APPENDAGE, "mass = ", "mass = 1e300 # ", "mass"),
])
def test_absurd_numbers_in_other_configurations(cli_run, tmp_path, src, old, new, key):
    """The rig and appendage configurations take their physical ranges from the same table
    (models.limits) as the scenarios."""
    cfg = _edit(src, tmp_path / "cfg.toml", old, new)
    out = tmp_path / "o"
    out.mkdir()
    if src == RIG:
        r = cli_run("simulate", "rig", cfg, "--command", RIG_COMMAND, "-o", out / "x.csv")
    else:
        r = cli_run("simulate", "appendage", cfg, "-o", out / "x.csv")
    check_one_error(r, code=2, names=["cfg.toml", key, "physical range"], tmp_path=out,
                    before=set())


def test_validate_with_the_scenario_refuses_what_reconstruct_refuses(cli_run, tmp_path):
    """A record that reads well but has no contact edge: plain validate calls it usable (it
    cannot know the unit); with the scenario it refuses it exactly as reconstruct does, same
    line, same exit code. The shipped flight passes both."""
    t = np.arange(30) * 0.1
    rec = tmp_path / "no_contact.csv"
    pd.DataFrame({"t": t, "stroke": np.zeros(30), "contact": np.zeros(30)}).to_csv(rec,
                                                                                   index=False)
    assert cli_run("validate", rec).exit_code == 0
    v = cli_run("validate", rec, "--scenario", SCENARIO)
    out = tmp_path / "o"
    out.mkdir()
    r = cli_run("reconstruct", rec, "--scenario", SCENARIO, "-o", out / "res")
    assert v.exit_code == r.exit_code == 2
    assert v.stderr.strip() == r.stderr.strip() and "rising edge of 'contact'" in v.stderr
    check_one_error(r, code=2, names=["no_contact.csv"], tmp_path=out, before=set())
    ok = cli_run("validate", FLIGHT, "--scenario", SCENARIO, "--config", RUN)
    assert ok.exit_code == 0 and "usable" in ok.stdout
    # a record with warnings (the realistic flight's gyro dropout): each said once, on stderr
    real = FLIGHT.parent / "realistic" / "nominal.parquet"
    w = cli_run("validate", real, "--scenario", SCENARIO, "--config",
                real.parent / "run.toml")
    lines = w.stderr.strip().splitlines()
    assert w.exit_code == 0 and len(lines) == 6 and len(set(lines)) == 6, lines
    assert all(line.startswith(f"warning: {real}: row 896, ") for line in lines)


@pytest.mark.parametrize("kind", ["missing", "no_result", "not_json", "foreign_json",
                                  "unknown_kind"])
def test_report_of_a_bad_result(cli_run, tmp_path, kind):
    d = tmp_path / "res"
    if kind != "missing":
        d.mkdir()
    if kind == "not_json":
        (d / "result.json").write_text('{"kind": "reconstruction", "parameters": {')
    elif kind == "foreign_json":
        (d / "result.json").write_text("[1, 2, 3]")
    elif kind == "unknown_kind":
        (d / "result.json").write_text('{"kind": "horoscope"}')
    before = {p.name for p in d.iterdir()} if d.exists() else set()
    r = cli_run("report", d)
    assert r.exit_code == 2, r.output
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1 and str(d) in errors[0] and "Traceback" not in r.output
    assert ({p.name for p in d.iterdir()} if d.exists() else set()) == before


@pytest.mark.parametrize("edit", [
    ("parameters", ["not", "an", "object"], "'parameters'"),
    ("parameters.rel_pos_x", 3.0, "'parameters.rel_pos_x'"),
    ("parameters.rel_pos_x.median", "fast", "'parameters.rel_pos_x.median'"),
    ("parameters.rel_pos_x.ci95", [1.0], "'parameters.rel_pos_x.ci95'"),
    ("diagnostics", "none", "'diagnostics'"),
    ("warnings", {"a": 1}, "'warnings'"),
    ("files", [3], "'files[0]'"),
    ("energy", [1, 2], "'energy'"),
], ids=lambda e: e[0] if isinstance(e, tuple) else str(e))
def test_report_of_a_result_with_an_entry_of_the_wrong_type(cli_run, tmp_path, edit):
    """``report`` of a result.json whose entry has another type than dockrecon writes: exit 2,
    one line naming the file and the key, no report written (not an AttributeError)."""
    import json
    import shutil

    key, value, named = edit
    out = tmp_path / "res"
    shutil.copytree(ROOT / "tests" / "reports" / "data" / "reconstruction", out)
    for stale in out.glob("report.*"):
        stale.unlink()
    doc = json.loads((out / "result.json").read_text())
    *parents, last = key.split(".")
    node = doc
    for p in parents:
        node = node[p]
    node[last] = value
    (out / "result.json").write_text(json.dumps(doc))
    r = cli_run("report", out)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and "result.json" in lines[0] and named in lines[0], lines
    assert not list(out.glob("report.*"))


def test_report_of_a_kind_entry_of_the_wrong_form_names_the_file(cli_run, tmp_path):
    """An entry of the kind's own (the hysteresis fit's ``element``) that is not what the
    builder reads: one line naming the file, exit 2."""
    import json

    doc = json.loads((ROOT / "tests" / "reports" / "data" / "hysteresis.json").read_text())
    doc["fitted"] = "gone"
    path = tmp_path / "fit.json"
    path.write_text(json.dumps(doc))
    r = cli_run("report", path)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and str(path) in lines[0] and "not of the form" in lines[0]


def test_appendage_output_that_cannot_fit_in_memory_is_refused_up_front(cli_run, tmp_path):
    """``output_points`` whose arrays exceed the machine's memory: exit 2 at once, naming the
    file and key with the estimate, no output (not a MemoryError)."""
    cfg = tmp_path / "app.toml"
    text = (ROOT / "models" / "presets" / "appendage_pulse.toml").read_text()
    import re

    cfg.write_text(re.sub(r"(?m)^output_points\s*=.*$", "output_points = 2000000000", text))
    r = cli_run("simulate", "appendage", cfg, "-o", tmp_path / "o.parquet")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and str(cfg) in lines[0] and "'output_points'" in lines[0]
    assert "GB of memory" in lines[0] and not (tmp_path / "o.parquet").exists()


def test_rig_command_starting_late_warns_and_a_run_too_long_for_memory_is_refused(
        cli_run, tmp_path, monkeypatch):
    """A command whose first sample is at 30 s (4 s long): simulated from t = 0 as the rig
    is, with one warning naming the file and the start. A span the memory cannot hold:
    refused up front naming the option, with the estimate."""
    import pandas as pd

    import models.limits

    cmd = pd.read_csv(RIG_COMMAND)
    cmd.iloc[:, 0] += 30.0
    late = tmp_path / "late.csv"
    cmd.to_csv(late, index=False)
    r = cli_run("simulate", "rig", RIG, "--command", late, "-o", tmp_path / "o.csv")
    assert r.exit_code == 0, r.output
    warned = [ln for ln in r.stderr.splitlines() if "WARNING" in ln]
    assert len(warned) == 1 and str(late) in warned[0] and "t = 30 s" in warned[0]
    monkeypatch.setattr(models.limits, "available_memory", lambda: 200_000_000)
    r = cli_run("simulate", "rig", RIG, "--command", RIG_COMMAND, "-o", tmp_path / "p.csv",
                "--t-end", "1e4")
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    assert len(lines) == 1 and "'--t-end'" in lines[0] and "GB of memory" in lines[0]
    assert not (tmp_path / "p.csv").exists()
