"""Render a :class:`reports.document.Report` as one self-contained HTML file.

Figures are embedded as ``data:`` URIs, the style sheet is inline, and nothing refers to the
network (no fonts, scripts or images from elsewhere), so the file can be mailed or archived as is.
"""
from __future__ import annotations

import base64
import html

from reports.document import Figure, Paragraph, Report, Summary, Table

__all__ = ["render_html"]

_CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; max-width: 60em;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.1em; }
.subtitle { color: #555; margin-top: 0; }
h2 { font-size: 1.25em; border-bottom: 1px solid #bbb; padding-bottom: 0.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #eef1f5; }
td:first-child, th:first-child { text-align: left; }
tr.flag td { background: #fff2cc; }
.summary { border: 2px solid #3a5f8f; background: #f5f8fc; padding: 0.6em 1em; margin: 1em 0; }
.summary table { border: none; margin: 0; }
.summary td { border: none; padding: 0.15em 0.8em 0.15em 0; }
figure { margin: 1.2em 0; }
figure img { max-width: 100%; }
figcaption { font-size: 0.9em; color: #444; }
caption { caption-side: bottom; font-size: 0.85em; color: #444; text-align: left; }
p.note { color: #555; font-size: 0.9em; }
p.warning { color: #8a4b00; font-weight: bold; }
"""


def _block(block) -> str:
    esc = html.escape
    if isinstance(block, Paragraph):
        return f'<p class="{esc(block.kind)}">{esc(block.text)}</p>'
    if isinstance(block, Summary):
        rows = "".join(f"<tr><td>{esc(k)}</td><td><b>{esc(v)}</b></td></tr>" for k, v in block.items)
        head = f"<h3>{esc(block.title)}</h3>" if block.title else ""
        return f'<div class="summary">{head}<table>{rows}</table></div>'
    if isinstance(block, Table):
        head = "".join(f"<th>{esc(c)}</th>" for c in block.columns)
        body = []
        for i, row in enumerate(block.rows):
            flag = block.flags[i] if i < len(block.flags) else False
            cells = "".join(f"<td>{esc(c)}</td>" for c in row)
            body.append(f'<tr class="flag">{cells}</tr>' if flag else f"<tr>{cells}</tr>")
        caption = f"<caption>{esc(block.caption)}</caption>" if block.caption else ""
        return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    if isinstance(block, Figure):
        data = base64.b64encode(block.png).decode("ascii")
        width = round(block.width_in * 96)
        return (f'<figure id="{esc(block.name)}"><img alt="{esc(block.caption)}" width="{width}" '
                f'src="data:image/png;base64,{data}"><figcaption>{esc(block.caption)}'
                f"</figcaption></figure>")
    raise TypeError(f"cannot render block of type {type(block).__name__}")


def render_html(report: Report) -> str:
    """The whole report as an HTML document (a string)."""
    esc = html.escape
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(report.title)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>{esc(report.title)}</h1>",
        f'<p class="subtitle">{esc(report.subtitle)}'
        + (f" &middot; {esc(report.date)}" if report.date else "") + "</p>",
    ]
    for section in report.sections:
        parts.append(f"<section><h2>{esc(section.title)}</h2>")
        parts.extend(_block(b) for b in section.blocks)
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
