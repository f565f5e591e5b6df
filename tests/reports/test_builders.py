"""Every report renders from a small stored result (tests/reports/data, made by
make_results.py there): sections present, summary numbers equal the result file, every figure
present in both HTML and PDF, and the HTML needs no network."""
import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from recon.app.cli import cli
from reports.builders._common import digits_for, fmt

DATA = Path(__file__).resolve().parent / "data"


def _render(target: Path):
    result = CliRunner().invoke(cli, ["report", str(target)])
    assert result.exit_code == 0, result.output
    return [Path(p) for p in result.stdout.split()]


def _check_self_contained(html: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:|#)""", html)
    assert "http://" not in html and "https://" not in html and "@import" not in html


def _pdf_text(path: Path) -> tuple[str, int]:
    pypdf = pytest.importorskip("pypdf")
    reader = pypdf.PdfReader(path)
    text = "\n".join(page.extract_text() for page in reader.pages)
    return text, sum(len(page.images) for page in reader.pages)


def test_reconstruction_report(tmp_path):
    """The stored result is a short real MCMC run (make_results.py): every section, the
    summary numbers of result.json, the events, and every figure, in HTML and PDF."""
    shutil.copytree(DATA / "reconstruction", tmp_path / "run")
    html_path, pdf_path = _render(tmp_path / "run")
    assert html_path.name == "report.html" and pdf_path.name == "report.pdf"
    html = html_path.read_text()
    _check_self_contained(html)
    data = json.loads((tmp_path / "run" / "result.json").read_text())
    assert data["kind"] == "reconstruction" and data["diagnostics"]["method"] == "mcmc"
    for section in ("Summary", "Telemetry against the reconstruction", "Residuals", "Parameters",
                    "Reconstructed relative trajectory", "Interface load histories",
                    "Absorber hysteresis loops", "Posterior of the initial conditions",
                    "Chains and convergence", "Interface loads and energy",
                    "Settings, seed and versions"):
        assert html.count(f"<h2>{section}</h2>") == 1, section
    assert html.count(">Summary<") == 1  # no second "Summary" heading inside the box
    # the summary shows the result's numbers (median, 95 % interval) in display units
    # (as many significant digits as resolve the 68 % interval: digits_for)
    v = data["parameters"]["rel_vel_x"]
    dv = digits_for(v)
    assert dv >= 5       # closing velocity known to ~1e-4 m/s: 4 digits would hide it
    assert f"{fmt(v['median'], 'm/s', dv)} m/s  (95 %: [{fmt(v['ci95'][0], 'm/s', dv)}, " \
           f"{fmt(v['ci95'][1], 'm/s', dv)}])" in html
    y = data["parameters"]["rel_pos_y"]
    assert f"{fmt(y['median'], 'm', digits_for(y))} mm" in html
    loads = data["loads"]
    for key in ("peak_axial_force", "peak_absorber_axial_force"):
        e = loads[key]
        d = digits_for(e)
        assert f"{fmt(e['median'], 'N', d)} kN  (95 %: [{fmt(e['ci95'][0], 'N', d)}, " \
               f"{fmt(e['ci95'][1], 'N', d)}])" in html, key
    bending = loads["peak_bending_moment"]
    assert bending["unit"] == "N*m" and \
        f"{fmt(bending['median'], 'N*m', digits_for(bending))} N m  (95 %" in html
    brake = data["energy"]["dissipated_brake"]
    assert f"{fmt(brake['median'], 'J', digits_for(brake))} J" in html
    capture = next(e for e in data["events"] if e["name"] == "capture")
    assert f"yes, at {capture['t']:.3f} s (telemetry time)  (95 %: [{capture['ci95'][0]:.3f}, " \
           f"{capture['ci95'][1]:.3f}])" in html
    # the event table: every event of the result with its time on the telemetry clock
    for e in data["events"]:
        assert f"<td>{e['name']}</td><td>{e['t']:.3f}</td><td>{e['t_model']:.3f}</td>" in html
    assert "No MCMC run" not in html and "Sampler stopped: step_limit" in html
    # every parameter in the table
    for name in data["parameters"]:
        assert f"<td>{name}</td>" in html
    # figures: channel fits (3 per figure), residuals (4 per figure), the trajectory (2), the
    # interface loads, the absorber loops and histories, two corner plots, the chains
    import pandas as pd

    fit = pd.read_parquet(tmp_path / "run" / "fit.parquet")
    channels = [c for c in fit.columns if f"{c}_fit" in fit.columns]
    fit_channels = len(channels)
    analog = sum(not set(fit[c].dropna().unique()) <= {0.0, 1.0} for c in channels)
    assert fit_channels >= 10 and analog >= 9  # stroke, 2 gimbal angles, 6 rates (+ flags)
    names = ([f"fit_{i}" for i in range(-(-fit_channels // 3))]
             + [f"residuals_{i}" for i in range(-(-analog // 4))]
             + ["trajectory_translation", "trajectory_rotation", "interface_loads",
                "absorber_loops", "absorber_histories", "corner_0", "corner_1", "chains"])
    assert re.findall(r'<figure id="([^"]+)">', html) == names
    text, images = _pdf_text(pdf_path)
    assert images == len(names)
    assert "Post-flight docking reconstruction" in text
    assert fmt(v["median"], "m/s", dv) in text


def test_reconstruction_summary_states_the_fit_and_why_no_chains():
    # the summary's "fit" row (cost, residuals, the plausibility limit of
    # identification.engines.gof_limit) and the reason the hybrid rule gives for skipping emcee
    from reports.builders.reconstruction import _summary

    data = json.loads((DATA / "reconstruction" / "result.json").read_text())
    opt = data["diagnostics"]["optimizer"]
    n = opt["n_residuals"]

    def rows(diag):
        d = {**data, "diagnostics": {**data["diagnostics"], **diag}}
        return dict(_summary(d, [], False).items)

    ok = rows({"search": {"rounds": 1, "gof_limit": 431.0, "plausible": True}})
    assert ok["fit"] == f"cost {opt['best_cost']:.1f} over {n} residuals (a fit is " \
                        "plausible up to 431)"
    bad = rows({"search": {"rounds": 3, "gof_limit": 431.0, "plausible": False}})
    assert "3 search rounds" in bad["fit"] and "IMPLAUSIBLE" in bad["fit"]
    skipped = rows({"method": "importance", "mcmc_skipped": "importance ESS 812 >= 100",
                    "importance": {"ess": 812.0, "n_proposal": 2000}})
    assert skipped["inference"].startswith("importance sampling with a Laplace-t proposal "
                                           "(not needed: importance ESS 812 >= 100)")


def test_reconstruction_report_is_deterministic(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    for name in ("a", "b"):
        shutil.copytree(DATA / "reconstruction", tmp_path / name)
        _render(tmp_path / name)
    for fmt_ in ("html", "pdf"):
        assert (tmp_path / "a" / f"report.{fmt_}").read_bytes() == \
            (tmp_path / "b" / f"report.{fmt_}").read_bytes()


def test_hysteresis_report(tmp_path):
    shutil.copy(DATA / "hysteresis.json", tmp_path / "fit.json")
    html_path, pdf_path = _render(tmp_path / "fit.json")
    assert html_path == tmp_path / "fit.html"
    html = html_path.read_text()
    _check_self_contained(html)
    data = json.loads((DATA / "hysteresis.json").read_text())
    for section in ("Summary", "Measured and fitted loops", "Fitted parameters",
                    "Settings and versions"):
        assert f"<h2>{section}</h2>" in html
    assert html.count(">Summary<") == 1  # the box has no second "Summary" heading
    assert f"{data['residual_rms']:.4g} N" in html
    assert html.count("data:image/png;base64,") == 1
    _, images = _pdf_text(pdf_path)
    assert images == 1


def test_rig_report(tmp_path):
    shutil.copytree(DATA / "rig", tmp_path / "rig")
    html_path, pdf_path = _render(tmp_path / "rig")
    html = html_path.read_text()
    _check_self_contained(html)
    data = json.loads((tmp_path / "rig" / "result.json").read_text())
    for section in ("Summary", "Parameters", "Record against the identified model", "Residuals"):
        assert f"<h2>{section}</h2>" in html
    assert html.count(">Summary<") == 1  # the box has no second "Summary" heading
    for name in data["parameters"]:
        assert f"<td>{name}</td>" in html
    text, images = _pdf_text(pdf_path)
    assert images == html.count("data:image/png;base64,") >= 2
    assert "Hydraulic test-rig identification" in text


def test_reconstruction_report_leads_with_its_warnings(tmp_path):
    """An ok result with warnings (an MCMC stopped unconverged at its step limit): the title
    says so and the warnings are the first section, before the summary; the answer itself is
    still presented as the reconstruction."""
    shutil.copytree(DATA / "reconstruction", tmp_path / "run")
    path = tmp_path / "run" / "result.json"
    data = json.loads(path.read_text())
    assert data.get("status", "ok") == "ok"
    assert data["diagnostics"]["mcmc"]["status"] == "step_limit"
    warning = ("the MCMC stopped at its step limit (600 steps per walker) before converging "
               "(max R-hat 1.05 >= 1.02): the intervals are provisional")
    path.write_text(json.dumps({**data, "warnings": [warning]}))
    html = _render(tmp_path / "run")[0].read_text()
    h1 = html[html.index("<h1"):]
    assert h1[h1.index(">") + 1:h1.index("</h1>")].endswith("(with warnings)")
    assert re.findall(r"<h2>([^<]+)</h2>", html)[:2] == ["Warnings", "Summary"]
    assert "The MCMC stopped at its step limit" in html and "not a reconstruction" not in html
