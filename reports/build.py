"""Write a report in the requested formats, atomically, and pick the builder for a result.

Every main job ends in :func:`write_report`; ``dockrecon report RESULT_DIR`` calls
:func:`rebuild_report`, which reads the result file and calls the builder of its ``"kind"``
(:data:`reports.builders.BUILDERS`). Builders only read results; they compute nothing new.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from models.errors import InputError
from recon.io import atomic_path
from reports.document import Report
from reports.html import render_html
from reports.pdf import render_pdf

__all__ = ["FORMATS", "write_report", "parse_formats", "rebuild_report"]

FORMATS = ("html", "pdf")

def parse_formats(text: str | Iterable[str]) -> tuple[str, ...]:
    """``"html,pdf"`` -> ``("html", "pdf")``; unknown formats are an InputError."""
    items = [t.strip().lower() for t in (text.split(",") if isinstance(text, str) else text)]
    items = [t for t in items if t]
    for item in items:
        if item not in FORMATS:
            raise InputError(f"unknown report format '{item}' (choose from {', '.join(FORMATS)})",
                             source="--format")
    if not items:
        raise InputError("no report format given", source="--format")
    return tuple(dict.fromkeys(items))


def write_report(report: Report, directory: str | os.PathLike, stem: str = "report",
                 formats: Iterable[str] = FORMATS) -> list[Path]:
    """Render ``report`` into ``directory/stem.<format>`` for each format; returns the paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for fmt in formats:
        path = directory / f"{stem}.{fmt}"
        with atomic_path(path) as tmp:
            if fmt == "html":
                tmp.write_text(render_html(report), encoding="utf-8")
            elif fmt == "pdf":
                tmp.write_bytes(render_pdf(report))
            else:
                raise InputError(f"unknown report format '{fmt}'", source="--format")
        written.append(path)
    return written


#: the result file a directory's report is built from, in order of preference
DIRECTORY_RESULTS = ("result.json", "calibration.json", "fleet.json", "campaign.json")


def rebuild_report(result: str | os.PathLike, formats: Iterable[str] = FORMATS, *,
                   directory: str | os.PathLike | None = None) -> list[Path]:
    """Rebuild the report of a result directory (its ``result.json``) or of a result file.

    The report is written as ``report.<format>`` (for a directory: the first of
    :data:`DIRECTORY_RESULTS` it holds) or ``<stem>.<format>``
    (for a file ``<stem>.json``) beside the result file, or into ``directory``.
    """
    from recon.io import read_json
    from reports.builders import BUILDERS

    path = Path(result)
    if path.is_dir():
        stem = "report"
        # a flight's result; a calibration study's (recon.app.study) or a campaign's
        # (recon.app.campaign) directory, which have no result.json of their own
        path = next((path / f for f in DIRECTORY_RESULTS if (path / f).exists()),
                    path / "result.json")
        if not path.exists():
            raise InputError("no result.json in this directory (an incomplete or foreign run?)",
                             source=str(path.parent))
    else:
        stem = path.stem
        if not path.exists():
            raise InputError("no such file or directory", source=str(path))
    from recon.results import check_result

    data = check_result(read_json(path), path)
    kind = data.get("kind")
    if kind not in BUILDERS:
        known = ", ".join(sorted(BUILDERS))
        raise InputError(f"unknown result kind {kind!r} (known: {known})" if kind is not None
                         else f"not a dockrecon result: no 'kind' (known: {known})",
                         source=str(path))
    try:
        report = BUILDERS[kind](data, path)
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        if isinstance(exc, InputError):
            raise
        # an entry of this kind's own that is not of the form its writer gives it (the shared
        # entries were checked above): the file's fault, named, with -v for the traceback
        raise InputError(f"an entry of this {kind} result is not of the form dockrecon writes "
                         f"({type(exc).__name__}: {str(exc)[:120]}); an edited or damaged "
                         "result?", source=str(path)) from exc
    return write_report(report, directory or path.parent, stem=stem, formats=formats)
