"""The drawings and report.html, read back by parsers (the browser test is tests/real/
test_drawings_browser.py): report.html says what report.md says, hostile text stays text,
sheets are bounded, the drawings count what the plan holds."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from xml.etree.ElementTree import Element

import pytest
import yaml

from cluster_iac.emit import drawings, elevations, fabric_drawings, report_html
from cluster_iac.formats import html, svg
from cluster_iac.formats.svg import DRAWN
from tests.conftest import EXAMPLE_IDS, example_build
from tests.svg_shapes import device_boxes, labels

SVG = "{http://www.w3.org/2000/svg}"


class _Page(HTMLParser):
    """The text of each table cell, each element's tag and each link's target, as a browser's
    parser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None
        self.scripts = 0
        self.links: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self.links.append(dict(attrs).get("href"))
        if tag == "script":
            self.scripts += 1
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _parsed(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    return page


def _markdown_cells(text: str) -> list[str]:
    """Each table cell of report.md as a reader sees it: escapes undone, code fences dropped."""
    cells = []
    for line in text.splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|(\s*-+:?\s*\|)+", line):
            for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1]):
                cell = cell.strip().replace("\\|", "|")
                cell = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", cell) if "`" not in cell \
                    else re.sub(r"^(`+) ?(.*?) ?\1$", r"\2", cell)
                cells.append(cell)
    return cells


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_report_html_has_every_cell_of_report_md(name: str) -> None:
    files = example_build(name).files
    page = _parsed(files["report.html"])
    expected = _markdown_cells(files["report.md"])
    assert len(expected) > 50
    assert page.cells[:len(expected)] == expected
    assert page.scripts == 1  # the sorting script, and nothing else runs


def test_hostile_text_stays_text() -> None:
    out = html.page("<script>alert(1)</script>")
    report_html.markdown(out, "# A `<b>` & <i>\n\n| a | b |\n|---|---:|\n"
                              "| <script>x</script> | \\| pipe \\<tag\\> |\n\nend </p><p>")
    page = _parsed(html.page_text(out))
    assert page.scripts == 1
    assert "i" not in page.tags and "b" not in page.tags
    assert page.cells == ["a", "b", "<script>x</script>", "| pipe <tag>"]


def test_an_unclosed_comment_line_is_a_paragraph() -> None:
    """A line that opens a comment and does not close it is text (it once matched no block
    and the conversion stood still on it, growing the page without end)."""
    out = html.page("t")
    report_html.markdown(out, "<!-- open\nnext\n<!-- done -->")
    assert "<body><p>&lt;!-- open\nnext</p>\n<!-- done --><script>" in html.page_text(out)


@pytest.mark.parametrize("writer", [html.Page, html.TreePage])
def test_inline_code_and_escapes(writer: type[html.Writer],
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(html, "WRITER", writer)
    out = html.page("t")
    out.open("p")
    report_html.inline(out, r"see `cabling/bom.md` and \*this\* and ``a ` b``")
    out.close()
    assert "<p>see <code>cabling/bom.md</code> and *this* and <code>a ` b</code></p>\n" in \
        html.page_text(out)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_fast_page_writer_writes_the_plain_writers_bytes(
        name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """html.Page (text written as made) against html.TreePage (elements printed by
    ElementTree's HTML serializer), its oracle: the same bytes for report.html and every
    sheet's page of every example."""
    build = example_build(name)
    assert html.WRITER is html.Page  # what the render uses
    pages = {path: text for path, text in build.files.items() if path.endswith(".html")}
    assert "report.html" in pages and len(pages) > 1
    monkeypatch.setattr(html, "WRITER", html.TreePage)
    plain = {"report.html": report_html.page(build.plan, build.files["report.md"])}
    plain |= {path: text for path, text in drawings.render(build.plan).items()
              if path.endswith(".html")}
    assert plain.keys() == pages.keys()
    for path in plain:
        assert pages[path] == plain[path], path


HOSTILE = 'a<b>&amp;"c"\'q\' </script><script>x()</script> </style> --> --!> <!-- \t\nd\r|e|'


def _hostile_page() -> str:
    """Every call of the writers' interface, each string hostile."""
    out = html.page(HOSTILE, HOSTILE)
    out.open("nav")
    out.leaf("a", HOSTILE, {"href": HOSTILE, "title": HOSTILE})
    out.close()
    out.comment(HOSTILE)
    out.leaf("h1", HOSTILE, {"id": HOSTILE})
    out.text(HOSTILE)  # text after a block: its tail, no line break
    out.text("")
    out.leaf("br", HOSTILE)  # a void element holding text: written, no end tag
    out.leaf("p")
    html.figure(out, HOSTILE, HOSTILE, HOSTILE)
    html.table(out, [HOSTILE, "n", "link"], [[HOSTILE, HOSTILE, HOSTILE], ["", "1", ""]],
               [False, True], link=2)
    html.table(out, ["a", "b"], [[HOSTILE, "2"], ["x", ""]], [True, False])
    cell = HOSTILE.replace("|", "\\|").replace("\n", " ").replace("\r", " ")
    report_html.markdown(out, f"<!--{HOSTILE}-->\n<!--{cell}-->\n# {cell} `<i>`\n\n"
                              f"- {cell}\n- `{cell}`\n\n"
                              f"| {cell} | n |\n|---|--:|\n| {cell} | 1 |\n| `{cell}` | \\` |\n"
                              f"| short |\n| a | b | c |\n\n{cell}\nsecond line")
    return html.page_text(out)


def test_fast_page_writer_escapes_as_the_plain_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile text in every call: the same bytes from both writers; the page's one script
    is its own, and its text comes back as text."""
    fast = _hostile_page()
    monkeypatch.setattr(html, "WRITER", html.TreePage)
    assert _hostile_page() == fast
    assert fast.count("<script>") == fast.count("</script>") == 1
    assert fast.count("<style>") == fast.count("</style>") == 1
    page = _parsed(fast)
    assert page.scripts == 1 and "i" not in page.tags and "b" not in page.tags
    assert page.cells[:4] == [HOSTILE, "n", "link", HOSTILE]
    assert page.links.count(HOSTILE) == 3  # nav, figure, the table's link column
    assert html.VOID == ET.HTML_EMPTY  # what the serializer leaves without an end tag
    with pytest.raises(ValueError, match="leaf"):
        html.Page().open("script")


def _svg(text: str) -> Element:
    return ET.fromstring(text)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_device_is_on_one_sheet_front_and_rear(name: str) -> None:
    """Each racked device on its rack's front face and rear face (all full depth, as NetBox's
    device types say), each 0U PDU on the rear face only, every rack's two faces drawn."""
    build = example_build(name)
    seen: dict[str, list[str]] = {"front": [], "rear": []}
    faces: list[tuple[str, str]] = []
    for sheet in drawings.sheets(build.plan):
        assert 1 <= len(sheet.racks) <= drawings.SHEET_RACKS
        text = build.files[f"{sheet.folder}/{sheet.elevation}"]
        faces += [(g.get("data-rack", ""), g.get("data-face", ""))
                  for g in _svg(text).iter(f"{SVG}g")]
        for device, face in device_boxes(text):
            seen[face].append(device)
        assert sheet.page in build.files
    racked = sorted(d.name for d in build.plan.devices if d.u and d.height_u)
    assert racked
    assert sorted(seen["front"]) == racked
    assert sorted(seen["rear"]) == sorted(d.name for d in build.plan.devices)
    assert sorted(faces) == sorted((r.name, f) for r in build.plan.racks for f in seen)


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_the_rear_face_holds_what_netbox_calls_full_depth(name: str) -> None:
    """The drawing and NetBox agree: a racked device is on the rear face when its NetBox
    device type (netbox/device-types/*.yaml) is full depth."""
    build = example_build(name)
    full_depth = {}
    for path, text in build.files.items():
        if path.startswith("netbox/device-types/"):
            doc = yaml.safe_load(text)
            full_depth[doc["model"]] = doc["is_full_depth"]
    rear = set()
    for sheet in drawings.sheets(build.plan):
        boxes = device_boxes(build.files[f"{sheet.folder}/{sheet.elevation}"])
        rear |= {device for (device, face), box in boxes.items()
                 if face == "rear" and box.role != "pdu"}
    racked = [d for d in build.plan.devices if d.u and d.height_u]
    assert {d.name for d in racked if full_depth[d.model]} == rear


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_fast_writer_writes_the_plain_writers_bytes(name: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """svg.Canvas (lines written as drawn) against svg.TreeCanvas (elements printed by
    formats.xml_text), its oracle: the same bytes for every drawing of every example."""
    plan = example_build(name).plan
    assert svg.WRITER is svg.Canvas  # what the render uses
    fast = drawings.render(plan)
    monkeypatch.setattr(svg, "WRITER", svg.TreeCanvas)
    plain = drawings.render(plan)
    assert plain.keys() == fast.keys()
    for path in plain:
        assert fast[path] == plain[path], path
    assert fast == {p: t for p, t in example_build(name).files.items() if p in fast}


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_shared_rack_faces_draw_what_the_plain_drawing_draws(name: str) -> None:
    """The elevations as rendered (each distinct rack face a symbol, each rack a use of it
    with its own labels) against the plain version (every rectangle in its rack): every
    device's rectangle at the same place, size and colour on each face, the same texts at the
    same places; and a symbol per distinct face, not per rack."""
    build = example_build(name)
    plan = build.plan
    devices = elevations.rack_devices(plan)
    loops = elevations.rack_loops(plan)
    for sheet in drawings.sheets(plan):
        shared = build.files[f"{sheet.folder}/{sheet.elevation}"]
        plain = elevations.elevation(plan, sheet.racks, f"{sheet.title}: front and rear",
                                     devices, loops, shared=False).svg_text()
        assert device_boxes(shared) == device_boxes(plain)
        assert labels(shared) == labels(plain)
        root = _svg(shared)
        assert len(root.findall(f"{SVG}g/{SVG}use")) == 2 * len(sheet.racks)
        assert not _svg(plain).findall(f"{SVG}symbol")
        kinds = {(r.height_u, tuple((d.u, d.height_u, d.model)
                                    for d in devices.get(r.name, ()) if d.u is not None))
                 for r in sheet.racks}
        assert len(root.findall(f"{SVG}symbol")) <= 2 * len(kinds)


def test_fast_writer_escapes_as_the_plain_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile text in every value the drawings pass: the same escaped bytes, parsed back to
    the same text; an empty group, an empty text and a character XML cannot carry."""
    hostile = 'a<b>&"c"\t\nd\r'
    out = []
    for writer in (svg.Canvas, svg.TreeCanvas):
        drawing = writer(10, 20, hostile, hostile)
        with drawing.group({"rack": hostile}):
            drawing.rect(1, 2, 3, 4, hostile, {"device": hostile}, stroke=hostile, tip=hostile)
            drawing.rect(1, 2, 3, 4, "#fff", tip="")
            with drawing.group():
                pass
            drawing.text(5, 6, hostile, size=8, anchor=hostile, fill=hostile, bold=True,
                         rotate=True, css=hostile)
            drawing.text(5, 6, "")
            drawing.text(5, 6, hostile, data={"device": hostile})
            drawing.line(1, 2, 3, 4, stroke=hostile, width=2)
            with drawing.symbol(hostile):
                drawing.rect(1, 2, 3, 4, "#fff", {"slot": "0"})
            with drawing.symbol("empty"):
                pass
            drawing.use(hostile, -1, 2)
        out.append(drawing.svg_text())
        bad = writer(1, 1, "x")
        with pytest.raises(ValueError, match="XML 1.0 cannot carry"):  # drawn or written
            bad.text(0, 0, "bell\x07")
            bad.svg_text()
    assert out[0] == out[1]
    root = _svg(out[0])
    assert root.find(f"{SVG}title").text == hostile  # type: ignore[union-attr]
    rect = root.find(f"{SVG}g/{SVG}rect")
    assert rect is not None and rect.get("data-device") == hostile
    assert rect.find(f"{SVG}title").text == hostile  # type: ignore[union-attr]
    assert root.find(f"{SVG}g/{SVG}symbol").get("id") == hostile  # type: ignore[union-attr]
    assert root.find(f"{SVG}g/{SVG}use").get("href") == "#" + hostile  # type: ignore[union-attr]
    assert root.findall(f"{SVG}g/{SVG}text")[2].get("data-device") == hostile
    with pytest.raises(ValueError, match="not an XML name"), \
            svg.Canvas(1, 1, "x").group({"a b": "c"}):
        pass


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_feed_is_drawn_with_its_worst_current(name: str) -> None:
    build = example_build(name)
    drawn: dict[str | None, Element] = {}
    for sheet in drawings.sheets(build.plan):
        root = _svg(build.files[f"{sheet.folder}/{sheet.power}"])
        drawn |= {r.get("data-feed"): r for r in root.iter(f"{SVG}rect") if r.get("data-feed")}
    assert set(drawn) == {feed.name for feed in build.plan.power_feeds}
    for feed in build.plan.power_feeds:
        assert drawn[feed.name].get("data-worst-a") == f"{max(feed.worst_a):.1f}"
        assert drawn[feed.name].get("data-limit-a") == f"{feed.limit_a:.1f}"


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_fabric_drawings_count_the_planned_cables(name: str) -> None:
    build = example_build(name)
    for network, fabric in build.plan.fabrics.items():
        root = _svg(build.files[f"drawings/fabric-{network}.svg"])
        units = [r for r in root.iter(f"{SVG}rect") if r.get("data-su")]
        assert sum(int(r.get("data-hosts", "0")) for r in units) == \
            sum(1 for t in build.plan.fabric_wiring[network].tier.values() if t == "node")
        assert sum(int(r.get("data-leaves", "0")) for r in units) == fabric.switch_counts["leaf"]
        title = root.find(f"{SVG}text")
        assert title is not None and f"{sum(fabric.link_counts.values()):,} cables" in str(
            title.text)
    assert len(fabric_drawings.paths(build.plan)) == sum(
        1 for path in build.files if path.startswith("drawings/") and "/" not in path[9:])


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_no_drawing_holds_more_than_a_few_thousand_objects(name: str) -> None:
    for path, text in example_build(name).files.items():
        if path.endswith(".svg"):
            assert sum(1 for e in _svg(text).iter() if e.tag[len(SVG):] in DRAWN) < 3000, path


def page_objects(files: dict[str, str]) -> dict[str, int]:
    """Each page's drawn objects: those of the drawings it shows (its <img> sources)."""
    counts = {}
    for path, text in files.items():
        if path.endswith(".html"):
            folder = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
            sources = re.findall(r'<img src="([^"]+)"', text)
            counts[path] = sum(sum(1 for e in _svg(files[folder + src]).iter()
                                   if e.tag[len(SVG):] in DRAWN) for src in sources)
    return counts


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_no_page_shows_more_than_a_few_thousand_objects(name: str) -> None:
    counts = page_objects(example_build(name).files)
    assert "report.html" in counts and any(path.startswith("drawings/") for path in counts)
    assert all(n < 3000 for n in counts.values()), counts
    assert all(n > 0 for path, n in counts.items() if path.startswith("drawings/")), counts


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_each_rack_header_says_its_load_limit_and_cooling(name: str) -> None:
    build = example_build(name)
    plan = build.plan
    racks = {rack.name: rack for rack in plan.racks}
    seen = set()
    for sheet in drawings.sheets(plan):
        root = _svg(build.files[f"{sheet.folder}/{sheet.elevation}"])
        for group in root.iterfind(f"{SVG}g[@data-face='front']"):
            rack = racks[group.get("data-rack", "")]
            texts = [t.text for t in group.findall(f"{SVG}text")]
            kw = plan.rack_loads_w[rack.name] / 1000
            limit = f" of {rack.max_power_kw:g} kW" if rack.max_power_kw else " (no limit)"
            assert texts[:2] == [rack.name, f"{kw:.2f} kW{limit}"]
            assert str(texts[2]).startswith(rack.cooling)
            seen.add(rack.name)
    assert seen == set(racks)


def test_the_100k_gpu_benchmark_pages_stay_bounded() -> None:
    """The benchmark's 100,000-GPU spec (tests/benchmarks/bench_scale.py: rows of 3,125 and
    more racks): every sheet at most SHEET_RACKS racks, and the largest page (a sheet's
    elevation and one-line, or report.html's fabric drawings) under 3,000 drawn objects, as on
    the examples: the pages multiply with the cluster, not their contents."""
    from cluster_iac.compile import compile_plan
    from cluster_iac.load.loader import load_spec_text
    from cluster_iac.spec.parse import parse_spec
    from tests.benchmarks.bench_scale import spec_yaml

    plan = compile_plan(parse_spec(load_spec_text(spec_yaml(100_000))[0]))
    assert plan.gpu_count == 100_000
    files = drawings.render(plan)
    sheets = drawings.sheets(plan)
    assert max(len(sheet.racks) for sheet in sheets) == drawings.SHEET_RACKS
    counts = page_objects(files)
    assert len(counts) == len(sheets) > 100
    counts["report.html"] = sum(sum(1 for e in _svg(files[path]).iter()
                                    if e.tag[len(SVG):] in DRAWN)
                                for path, _caption in fabric_drawings.paths(plan))
    largest = max(counts.values())
    assert 1_000 < largest < 3_000, max(counts, key=counts.__getitem__)
