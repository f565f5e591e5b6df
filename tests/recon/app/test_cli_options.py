"""The options every command shares: -q and -v before or after the subcommand, -o where a
command writes, --seed / --config with one meaning; progress on stderr."""
import io

import click
import pytest

from models.probe_cone import preset_path
from recon.app.cli import cli
from recon.app.cli.options import SEED_DEFAULT, Progress

#: commands that write files (``-o`` names where), and those that only print
WRITERS = {"simulate docking", "simulate appendage", "simulate rig", "identify hysteresis",
           "identify rig", "identify resonance", "identify resonance-coupling", "reconstruct",
           "samples generate", "report", "campaign", "fleet", "study calibration", "study merge",
           "train", "schema"}
PRINTERS = {"validate", "bench docking", "show"}


def _leaves(group: click.Group, prefix: str = ""):
    for name, cmd in group.commands.items():
        if isinstance(cmd, click.Group):
            yield from _leaves(cmd, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", cmd


def test_every_command_takes_the_shared_options():
    names = set()
    for name, cmd in _leaves(cli):
        names.add(name)
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"-q", "--quiet", "-v", "--verbose"} <= opts, name
        if name in WRITERS:
            assert {"-o", "--output"} <= opts, name
        if "--scheduler" in opts:        # every command on Dask names its cluster alike
            assert {"--scheduler-file", "--dashboard", "--workers", "--resume"} <= opts, name
        for p in cmd.params:  # --seed and --config mean the same everywhere
            if "--seed" in getattr(p, "opts", []):
                assert p.type is click.INT and "Seed of every random choice" in p.help, name
                assert p.default == SEED_DEFAULT, name      # one default, whatever the command
            if "--config" in getattr(p, "opts", []):
                assert p.help.startswith("Configuration:"), name
    assert names == WRITERS | PRINTERS


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_and_verbose_before_or_after_the_subcommand(cli_run, tmp_path, where):
    out = tmp_path / "t.parquet"
    args = ["simulate", "docking", str(preset_path("reference")), "-o", out,
            "--duration", "0.5", "--rate", "10"]
    quiet = cli_run(*(["-q"] + args if where == "before" else args + ["-q"]))
    assert quiet.exit_code == 0 and quiet.stderr == "" and out.exists()
    loud = cli_run(*(["-v"] + args if where == "before" else args + ["-v"]))
    assert loud.exit_code == 0 and "INFO dockrecon: docking:" in loud.stderr


def test_verbose_after_the_subcommand_gives_the_traceback(cli_run, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('unit = "probe_cone"\n[meta]\nname = 1\nfoo = 2\n')
    args = ["simulate", "docking", bad, "-o", tmp_path / "x.parquet"]
    plain = cli_run(*args)
    assert plain.exit_code == 2 and "Traceback" not in plain.stderr
    assert cli_run(*args, "-v").stderr.count("Traceback") == 1


def test_progress_plain_lines_off_a_terminal_and_silent_with_quiet():
    buf = io.StringIO()
    p = Progress("job", every=1e9, stream=buf, tty=False)
    for k in range(1, 11):
        p("screen", k, 10)
    p("sample", 1, 3)
    # a line when a stage starts and when it ends; the 1e9 s throttle keeps the middle quiet
    assert buf.getvalue().splitlines() == ["job: screen 1/10", "job: screen 10/10",
                                            "job: sample 1/3"]


def test_samples_generate_never_writes_into_the_package_unasked(cli_run, tmp_path, monkeypatch):
    """Without -o the samples go to ./samples/flights/peripheral in the working directory;
    the shipped files in the package are untouched."""
    from telemetry_samples import SAMPLES_DIR

    shipped = SAMPLES_DIR / "flights" / "peripheral" / "nominal.parquet"
    before = shipped.read_bytes()
    monkeypatch.chdir(tmp_path)
    r = cli_run("samples", "generate", "flights", "--unit", "peripheral", "-q")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "samples" / "flights" / "peripheral" / "nominal.parquet").exists()
    assert shipped.read_bytes() == before


def test_show_prints_the_parameter_table_in_the_configurations_units(cli_run, tmp_path):
    """``show DIR``: the status and each parameter's median and 95 % interval in the unit its
    run configuration states (deg for the angles of the shipped one, converted from the SI of
    result.json), fixed parameters marked; ``--json``: SI, as result.json holds them. A
    directory without a result is refused naming it."""
    import json
    import math

    from recon.app.summary import machine_summary, parameter_table

    config = tmp_path / "run.toml"
    config.write_text('[parameters.rel_roll]\nlower = -7.0\nupper = 7.0\nunit = "deg"\n'
                      '[parameters.rel_pos_x]\nfixed = -1.05\nunit = "m"\n')
    doc = {"status": "ok", "status_reason": "plausible fit",
           "diagnostics": {"method": "importance"},
           "settings": {"config": str(config),
                        "parameters": {"rel_roll": {"unit": "rad", "fixed": False},
                                       "rel_pos_x": {"unit": "m", "fixed": True}}},
           "parameters": {"rel_roll": {"map": 0.01, "median": math.radians(-0.25),
                                       "ci68": [-0.02, 0.02],
                                       "ci95": [math.radians(-2.97), math.radians(2.1)],
                                       "unit": "rad"},
                          "rel_pos_x": {"map": -1.05, "median": -1.05, "ci68": [-1.05, -1.05],
                                        "ci95": [-1.05, -1.05], "unit": "m"}}}
    out = tmp_path / "res"
    out.mkdir()
    (out / "result.json").write_text(json.dumps(doc))
    r = cli_run("show", out)
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0] == "status ok: plausible fit" and lines[1] == "intervals from importance"
    roll = next(line for line in lines if line.startswith("rel_roll")).split()
    assert roll[1:] == ["-0.25", "[-2.97,", "2.1]", "deg"]
    assert next(line for line in lines if line.startswith("rel_pos_x")).split()[2] == "fixed"
    assert r.stdout.strip() == parameter_table(doc)
    r = cli_run("show", out, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == json.loads(
        json.dumps(machine_summary(doc)))
    assert json.loads(r.stdout)["parameters"]["rel_roll"]["unit"] == "rad"
    r = cli_run("show", tmp_path)
    assert r.exit_code == 2 and "no result.json" in r.stderr
