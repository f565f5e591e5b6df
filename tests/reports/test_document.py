"""The report framework: HTML and PDF carry the same content, are deterministic, and the HTML
needs no network."""
import re

import numpy as np
import pytest

from models.errors import InputError
from reports.build import parse_formats, write_report
from reports.document import Figure, Paragraph, Report, Section, Summary, Table, figure_png, report_date
from reports.figures import new_figure


def _report() -> Report:
    fig, axes = new_figure(1, 1, height_in=2.5)
    t = np.linspace(0.0, 2.0, 50)
    axes[0, 0].plot(t, np.sin(t), label="stroke")
    axes[0, 0].set_xlabel("time [s]")
    axes[0, 0].set_ylabel("stroke [m]")
    axes[0, 0].legend()
    return Report(
        title="Test report", subtitle="unit test", date=report_date("2026-01-01"),
        sections=(
            Section("Summary", (Summary((("closing velocity", "0.200 m/s"),)),)),
            Section("Parameters", (Table(("name", "value"), (("rel_vel_x", "0.2"), ("mu", "0.1")),
                                         caption="the table", flags=(False, True)),
                                   Paragraph("a note", kind="note"))),
            Section("Figures", (figure_png(fig, "stroke history", name="stroke"),)),
        ))


def test_html_is_self_contained(tmp_path):
    paths = write_report(_report(), tmp_path, formats=("html",))
    text = paths[0].read_text()
    # no reference to anything outside the file: no URLs in src/href, no @import, no url(http
    assert not re.search(r"""(src|href)\s*=\s*["'](?!data:|#)""", text)
    assert "http://" not in text and "https://" not in text and "@import" not in text
    assert text.count("data:image/png;base64,") == 1
    for needle in ("Test report", "closing velocity", "0.200 m/s", "rel_vel_x", "the table",
                   "stroke history", 'class="flag"'):
        assert needle in text


def test_same_report_gives_identical_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a = write_report(_report(), tmp_path / "a")
    b = write_report(_report(), tmp_path / "b")
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name


def test_pdf_carries_the_same_content(tmp_path):
    pypdf = pytest.importorskip("pypdf")
    (path,) = write_report(_report(), tmp_path, formats=("pdf",))
    reader = pypdf.PdfReader(path)
    text = "\n".join(page.extract_text() for page in reader.pages)
    for needle in ("Test report", "closing velocity", "0.200 m/s", "rel_vel_x", "stroke history"):
        assert needle in text
    images = sum(len(page.images) for page in reader.pages)
    assert images == 1


def test_source_date_epoch_sets_the_date(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    assert report_date("ignored") == "1970-01-01 00:00 UTC"
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert report_date("from result") == "from result"


def test_formats_are_validated():
    assert parse_formats("html, pdf,html") == ("html", "pdf")
    with pytest.raises(InputError, match="unknown report format 'docx'"):
        parse_formats("html,docx")


def test_table_rows_must_match_columns():
    with pytest.raises(ValueError):
        Table(("a", "b"), (("1",),))


def test_figure_png_has_no_metadata_timestamps():
    fig, _ = new_figure()
    figure = figure_png(fig, "empty")
    assert isinstance(figure, Figure)
    assert b"Software" not in figure.png and b"Creation" not in figure.png


def test_report_command_errors_are_one_line(tmp_path):
    from click.testing import CliRunner

    from recon.app.cli import cli

    missing = CliRunner().invoke(cli, ["report", str(tmp_path / "nope")])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == f"error: {tmp_path / 'nope'}: no such file or directory"
    empty_dir = CliRunner().invoke(cli, ["report", str(tmp_path)])
    assert empty_dir.exit_code == 2 and "no result.json" in empty_dir.stderr
    foreign = tmp_path / "x.json"
    foreign.write_text('{"hello": 1}')
    unknown = CliRunner().invoke(cli, ["report", str(foreign)])
    assert unknown.exit_code == 2 and "no 'kind'" in unknown.stderr
    other = tmp_path / "y.json"
    other.write_text('{"kind": "horoscope"}')
    unknown = CliRunner().invoke(cli, ["report", str(other)])
    assert unknown.exit_code == 2 and "unknown result kind 'horoscope'" in unknown.stderr
