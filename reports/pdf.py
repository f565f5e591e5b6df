"""Render a :class:`reports.document.Report` as an A4 PDF with reportlab.

The PDF carries the same blocks as the HTML file. It is written with reportlab's ``invariant``
mode (fixed creation date and document id), so the same report gives byte-identical files.
"""
from __future__ import annotations

import io
from xml.sax.saxutils import escape

from reports.document import Figure, Paragraph, Report, Summary, Table

__all__ = ["render_pdf"]


def _styles():
    from reportlab.lib import colors
    from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet

    base = getSampleStyleSheet()
    return {
        "title": base["Title"],
        "subtitle": ParagraphStyle("subtitle", parent=base["Normal"], textColor=colors.HexColor("#555555"),
                                   alignment=1, spaceAfter=12),
        "h2": ParagraphStyle("h2", parent=base["Heading2"], spaceBefore=12, keepWithNext=1),
        "h2split": ParagraphStyle("h2split", parent=base["Heading2"], spaceBefore=12,
                                  keepWithNext=0),
        "h3": ParagraphStyle("h3", parent=base["Heading3"], keepWithNext=1),
        "text": base["BodyText"],
        "note": ParagraphStyle("note", parent=base["BodyText"], fontSize=8.5, leading=11,
                               textColor=colors.HexColor("#555555")),
        "warning": ParagraphStyle("warning", parent=base["BodyText"], fontName="Helvetica-Bold",
                                  textColor=colors.HexColor("#8a4b00")),
        "caption": ParagraphStyle("caption", parent=base["BodyText"], fontSize=8.5, leading=11,
                                  textColor=colors.HexColor("#444444"), spaceAfter=8),
        "cell": ParagraphStyle("cell", parent=base["BodyText"], fontSize=7.5, leading=9),
        "cellr": ParagraphStyle("cellr", parent=base["BodyText"], fontSize=7.5, leading=9, alignment=2),
    }


def _flowables(block, styles, frame_width: float, frame_height: float = 720.0) -> list:
    from reportlab.lib import colors
    from reportlab.platypus import Image, Spacer
    from reportlab.platypus import Paragraph as P
    from reportlab.platypus import Table as T
    from reportlab.platypus import TableStyle

    if isinstance(block, Paragraph):
        return [P(escape(block.text), styles.get(block.kind, styles["text"]))]
    if isinstance(block, Summary):
        rows = [[P(escape(k), styles["cell"]), P(f"<b>{escape(v)}</b>", styles["cell"])]
                for k, v in block.items]
        table = T(rows, colWidths=[0.42 * frame_width, 0.54 * frame_width])
        table.setStyle(TableStyle([
            ("BOX", (0, 0), (-1, -1), 1.5, colors.HexColor("#3a5f8f")),
            ("BACKGROUND", (0, 0), (-1, -1), colors.HexColor("#f5f8fc")),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ]))
        head = [P(escape(block.title), styles["h3"])] if block.title else []
        return [*head, table, Spacer(1, 8)]
    if isinstance(block, Table):
        head = [P(f"<b>{escape(c)}</b>", styles["cell"]) for c in block.columns]
        body = [[P(escape(c), styles["cell"] if j == 0 else styles["cellr"]) for j, c in enumerate(row)]
                for row in block.rows]
        # full frame width, shared by the longest text of each column (Paragraph cells have
        # no natural width: left to reportlab, intervals wrap onto two lines and the table
        # no longer fits under the summary on page 1). Columns whose longest text fits in
        # 22 characters get the width that text needs on one line (plus the cell padding),
        # so numbers never wrap (a MAP of -0.040262 did, into "-0.04026" over "2"); longer
        # texts wrap whatever their width and share what is left.
        from reportlab.pdfbase.pdfmetrics import stringWidth

        cell = styles["cell"]
        texts = [block.columns, *block.rows]
        longest = [max(texts, key=lambda r: len(str(r[j])))[j] for j in range(len(block.columns))]
        need = [stringWidth(str(t), "Helvetica-Bold", cell.fontSize) + 14.0 for t in longest]
        fits = [len(str(t)) <= 22 for t in longest]
        room = frame_width - sum(w for w, f in zip(need, fits) if f)
        n_wrap = sum(not f for f in fits)
        if n_wrap and room > 60.0 * n_wrap:
            widths = [w if f else room / n_wrap for w, f in zip(need, fits)]
        else:
            widths = [frame_width * w / sum(need) for w in need]
        table = T([head] + body, repeatRows=1, hAlign="LEFT", colWidths=widths)
        style = [
            ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#bbbbbb")),
            ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#eef1f5")),
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ]
        for i, flag in enumerate(block.flags):
            if flag:
                style.append(("BACKGROUND", (0, i + 1), (-1, i + 1), colors.HexColor("#fff2cc")))
        table.setStyle(TableStyle(style))
        out = [table]
        if block.caption:
            out.append(P(escape(block.caption), styles["caption"]))
        return out
    if isinstance(block, Figure):
        width = min(frame_width, block.width_in * 72.0)
        height = width * block.height_in / block.width_in
        max_height = 0.88 * frame_height  # leaves room for the caption on the same page
        if height > max_height:
            width, height = width * max_height / height, max_height
        image = Image(io.BytesIO(block.png), width=width, height=height)
        # keepWithNext rather than KeepTogether: reportlab chains keepWithNext flowables, so a
        # section heading right before the figure stays on its page (a KeepTogether would not
        # join the heading's chain)
        image.keepWithNext = 1
        return [image, P(escape(block.caption), styles["caption"])]
    raise TypeError(f"cannot render block of type {type(block).__name__}")


def render_pdf(report: Report) -> bytes:
    """The whole report as PDF bytes (A4, 18 mm margins)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.units import mm
    from reportlab.platypus import Paragraph as P
    from reportlab.platypus import CondPageBreak, SimpleDocTemplate

    styles = _styles()
    buf = io.BytesIO()
    margin = 18 * mm
    doc = SimpleDocTemplate(buf, pagesize=A4, leftMargin=margin, rightMargin=margin,
                            topMargin=margin, bottomMargin=margin, title=report.title,
                            author="dockrecon", creator="dockrecon", producer="dockrecon",
                            subject=report.subtitle, invariant=1)
    frame_width = A4[0] - 2 * margin
    story = [P(escape(report.title), styles["title"]),
             P(escape(report.subtitle + (f"  ·  {report.date}" if report.date else "")),
               styles["subtitle"])]
    for section in report.sections:
        if section.blocks and isinstance(section.blocks[0], Table):
            # a heading kept with a table moves both to the next page whenever the whole
            # table does not fit (reportlab groups keepWithNext flowables in a KeepTogether):
            # the parameter table would leave page 1 half empty. Let the table split instead,
            # with room for the heading and a few rows ensured.
            story.append(CondPageBreak(45 * mm))
            story.append(P(escape(section.title), styles["h2split"]))
        else:
            story.append(P(escape(section.title), styles["h2"]))
        for block in section.blocks:
            story.extend(_flowables(block, styles, frame_width, A4[1] - 2 * margin))

    def _footer(canvas, document):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.drawRightString(A4[0] - margin, 10 * mm, f"{report.title}  ·  page {document.page}")
        canvas.restoreState()

    doc.build(story, onFirstPage=_footer, onLaterPages=_footer)
    return buf.getvalue()
