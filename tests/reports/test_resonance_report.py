"""Resonance report: builder over a stored OUT.json (written by
``dockrecon identify resonance telemetry_samples/resonance/jump.csv --frequency 28 --mass 2
--refine never``),
figure functions, and ``dockrecon report OUT.json``."""
import json
import shutil
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from recon.app.cli import cli
from reports.builders import BUILDERS
from reports.document import Figure, Summary, Table

DATA = Path(__file__).parent / "data" / "resonance_jump.json"


def _build():
    from reports.builders.resonance import build_resonance_report

    return json.loads(DATA.read_text()), build_resonance_report(json.loads(DATA.read_text()),
                                                                DATA)


def test_the_result_names_its_kind_and_the_report_has_its_builder():
    kind = json.loads(DATA.read_text())["kind"]
    assert kind == "resonance" and kind in BUILDERS


def test_sections_figures_and_summary_numbers_equal_the_file():
    data, rep = _build()
    titles = [s.title for s in rep.sections]
    assert titles == ["Summary", "Amplitude sequence", "Identified forces",
                      "Settings and versions"]
    names = [f.name for f in rep.figures()]
    assert names == ["amplitude_sequence", "forces"]
    assert all(isinstance(f, Figure) and f.png[:8] == b"\x89PNG\r\n\x1a\n" for f in rep.figures())
    summary = next(b for b in rep.sections[0].blocks if isinstance(b, Summary))
    items = dict(summary.items)
    s, b = data["settings"], np.asarray(data["amplitude_sequence"]["b"])
    assert items["excitation frequency ν"].startswith(f"{s['frequency_rad_s']:.4g} rad/s")
    assert items["reduced mass μ"] == f"{s['mass_kg']:.4g} kg"
    assert items["windows"] == str(len(b))
    assert items["amplitude range b"] == f"{b.min() * 1e3:.4g} – {b.max() * 1e3:.4g} mm"
    assert items["amplitude jumps"] == str(len(data["jumps"])) == "1"
    assert items["method"] == s["method"]
    # jump table: one row with the file's amplitudes in mm
    table = next(b for b in rep.sections[1].blocks if isinstance(b, Table))
    j = data["jumps"][0]
    assert table.rows[0][2:4] == (f"{j['b_before'] * 1e3:.4g}", f"{j['b_after'] * 1e3:.4g}")
    lo, hi = j["gap"]
    assert table.rows[0][4] == f"{lo * 1e3:.4g} – {hi * 1e3:.4g}"
    assert table.rows[0][6].startswith(str(j["windows_settling"]))
    settings = next(b for b in rep.sections[3].blocks if isinstance(b, Table))
    assert ("mass_kg", "2") in settings.rows
    # the refinement is reported either way (here: not run)
    assert "not run" in items["refinement"]


def test_jump_marker_sits_between_the_two_amplitudes():
    from reports.builders.resonance import jump_positions

    b = np.array([1.0, 2.0, 3.0, 10.0, 11.0])
    assert jump_positions(b, [{"b_before": 3.0, "b_after": 10.0}]) == [2.5]


def test_figure_functions_label_axes_with_units_and_draw_truth():
    from reports.figures_resonance import (plot_amplitude_sequence, plot_damping,
                                           plot_restoring_force)

    x = np.linspace(-0.02, 0.02, 11)
    ax = plot_restoring_force(x, 100 * x, truth=(x, 100 * x), b_range=(0.001, 0.02),
                              gaps=[(0.005, 0.015)])
    assert "[mm]" in ax.get_xlabel() and "[N]" in ax.get_ylabel()
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"truth", "identified", "jump: no data"} <= set(labels)
    ax = plot_restoring_force(x, 100 * x, band=(90 * x - 1, 95 * x - 0.5, 105 * x + 0.5,
                                                110 * x + 1),
                              interpolated=np.abs(x) > 0.01, gaps=[(0.01, 0.02)])
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"95 % band", "68 % band", "interpolated (gap)", "identified"} <= labels
    # displayed in mm: the line's x data is 1e3 x
    assert np.allclose(ax.get_lines()[-1].get_xdata(), 1e3 * x)
    ax = plot_damping(np.linspace(0, 0.1, 5), np.linspace(0, 1, 5), truth=None)
    assert "[mm/s]" in ax.get_xlabel() and "[N]" in ax.get_ylabel()
    axes = plot_amplitude_sequence(np.r_[0.001, 0.002, 0.01], np.zeros(3), np.ones(3),
                                   jumps=[1.5])
    assert len(axes) == 3 and "[mm]" in axes[0].get_ylabel()
    assert any(ln.get_label() == "jump" for ln in axes[0].get_lines())


def test_cli_report_writes_html_and_pdf_beside_the_result(tmp_path):
    out = tmp_path / "OUT.json"
    shutil.copy(DATA, out)
    res = CliRunner().invoke(cli, ["report", str(out)])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "OUT.html").read_text()
    assert "Resonance-test identification" in html and "Amplitude sequence" in html
    assert (tmp_path / "OUT.pdf").read_bytes()[:5] == b"%PDF-"
