"""A small document model shared by the HTML and PDF renderers.

A report is built once, as a :class:`Report` of :class:`Section` objects holding blocks
(:class:`Paragraph`, :class:`Table`, :class:`Figure`, :class:`Summary`), and rendered by
:func:`reports.html.render_html` and :func:`reports.pdf.render_pdf`: both formats carry the
same content, from the same figure functions.

Determinism: figures are rasterised once to PNG with fixed resolution and no time-stamp or
software metadata, so the same result gives byte-identical files. The date shown in a report
is taken from ``SOURCE_DATE_EPOCH`` when set (reproducible-builds convention), otherwise from
the result itself, never from the clock.
"""
from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Paragraph",
    "Table",
    "Figure",
    "Summary",
    "Section",
    "Report",
    "figure_png",
    "report_date",
    "FIGURE_DPI",
]

#: Resolution of embedded figures [dots per inch]: sharp on an A4 page at full text width.
FIGURE_DPI = 150


@dataclass(frozen=True)
class Paragraph:
    """Plain text; ``kind`` is ``"text"``, ``"note"`` or ``"warning"``."""

    text: str
    kind: str = "text"


@dataclass(frozen=True)
class Table:
    """A table of already formatted cells (strings). ``flags`` marks rows to highlight."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    flags: tuple[bool, ...] = ()

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.columns):
                raise ValueError(f"table row {row!r} has {len(row)} cells, "
                                 f"expected {len(self.columns)}")


@dataclass(frozen=True)
class Summary:
    """The key-value box at the top of a report: ``items`` are (label, formatted value);
    ``title`` is shown above the box when given (not by default: the box usually opens a
    section already titled "Summary")."""

    items: tuple[tuple[str, str], ...]
    title: str = ""


@dataclass(frozen=True)
class Figure:
    """A rendered figure: PNG bytes, its caption, its size on the page [inch]."""

    png: bytes
    caption: str
    width_in: float
    height_in: float
    name: str = ""


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Report:
    """A whole report: title, subtitle line, date string, sections."""

    title: str
    subtitle: str
    date: str
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def figures(self) -> list[Figure]:
        return [b for s in self.sections for b in s.blocks if isinstance(b, Figure)]


def figure_png(fig: Any, caption: str, name: str = "") -> Figure:
    """Rasterise a matplotlib figure deterministically and close it.

    The PNG carries no software or time metadata, so identical figures give identical bytes.
    """
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    width, height = fig.get_size_inches()
    fig.savefig(buf, format="png", dpi=FIGURE_DPI, metadata={"Software": None})
    plt.close(fig)
    return Figure(png=buf.getvalue(), caption=caption, width_in=float(width),
                  height_in=float(height), name=name)


def report_date(fallback: str | None = None) -> str:
    """The date to print: ``SOURCE_DATE_EPOCH`` (UTC) when set, else ``fallback``, else ''."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch:
        try:
            return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(int(epoch)))
        except ValueError:
            pass
    return fallback or ""
