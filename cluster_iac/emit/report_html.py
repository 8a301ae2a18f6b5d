"""report.html: report.md as a page, with the fabric drawings and an index of the sheets.

The page is report.md's own text converted block by block (emit/html.py markdown), so it says
exactly what report.md says; its tables sort by a click. A section "Drawings" follows: the
fabric and NVLink drawings embedded, and a table of the rack sheets (emit/drawings.py), each
linked to its page with the sheet's elevations and power one-line. The drawings are files
beside the page: it works offline, opened from the rendered folder.
"""

from __future__ import annotations

from xml.etree.ElementTree import SubElement

from cluster_iac.emit import drawings, fabric_drawings, html
from cluster_iac.plan import Plan


def page(plan: Plan, text: str) -> str:
    """report.html of report.md's ``text``."""
    # report.md's first line, the generated-by comment, becomes the page's comment
    root, body = html.page(f"Cluster report: {plan.cluster.name}")
    nav = SubElement(body, "nav")
    SubElement(nav, "a", {"href": "#drawings"}).text = "Drawings"
    SubElement(nav, "a", {"href": "report.md"}).text = "report.md"
    html.markdown(body, text)
    SubElement(body, "h2", {"id": "drawings"}).text = "Drawings"
    for path, caption in fabric_drawings.paths(plan):
        html.figure(body, caption, path, caption)
    SubElement(body, "h3").text = "Rack elevations and power one-lines"
    SubElement(body, "p").text = (
        f"Each row's racks in sheets of at most {drawings.SHEET_RACKS}: the sheet's page "
        "shows their elevations (front and rear, every device at its U) and their power "
        "one-line (panels, feeds, PDUs, each feed's worst-case current against its breaker).")
    index = html.table(body, ["Row", "Sheet", "Racks", "First rack", "Last rack", "Page"],
                       [[s.row, str(s.number), str(len(s.racks)), s.racks[0].name,
                         s.racks[-1].name, ""] for s in drawings.sheets(plan)],
                       [False, True, True, False, False, False])
    cells = index.iterfind("tbody/tr/td[6]")
    for sheet, cell in zip(drawings.sheets(plan), cells, strict=True):
        SubElement(cell, "a", {"href": sheet.page}).text = sheet.page
    return html.page_text(root)
