"""Real consumer: headless Chromium (Debian's chromium, driven by Selenium through Debian's
chromium-driver) opens every example's report.html, sheet pages and drawings from the rendered
folder, as a reviewer would.

On every page: no console message of level SEVERE, no request for anything but a file:// (or
the page's own data: icon) URL, in Chromium's performance log (every request the page made)
and in its resource timing entries; every embedded drawing loaded. In every elevation of
every example, each device's rectangle is read back from the DOM (its geometry, not its data-
attributes: the rectangle of its slot in the symbol its rack face's use draws, moved by the
use, for the rack faces are drawn once per distinct face) and must sit at the U and height
the plan's device table gives, its name label drawn on it, on the rack's
front face and on its rear face (every racked device is full depth); 0U PDUs beside the rear
face, side A on the right as seen from behind; every device drawn exactly once on each face it
shows on. A sortable table sorts. A screenshot of
each page type (report, sheet page, elevation, power one-line, fabric) is kept under
tests/artifacts/drawings/ (ignored by git). Under CI=true a missing chromium or chromedriver
fails the tests; elsewhere they skip.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster_iac.emit import fabric_drawings
from tests.conftest import EXAMPLE_IDS, ROOT, example_build

pytestmark = pytest.mark.real

ARTIFACTS = ROOT / "tests" / "artifacts" / "drawings"
CHROMIUM = ("chromium", "/usr/bin/chromium")
DRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--window-size=1600,1200")


def _missing(what: str) -> None:
    message = f"{what} is missing: apt-get install chromium chromium-driver (.ci/install-deps)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """One headless Chromium for the module, with a fresh profile, logging console messages
    and every network request."""
    binary = shutil.which(CHROMIUM[0]) or (CHROMIUM[1] if Path(CHROMIUM[1]).exists() else None)
    if binary is None:
        _missing("chromium")
    if not Path(DRIVER).exists():
        _missing("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("selenium is missing: pip install -e '.[test]'")
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = str(binary)
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every example's files written into a folder of its own, as `render` leaves them."""
    out = {}
    for name in EXAMPLE_IDS:
        root = tmp_path_factory.mktemp(name)
        for path, text in example_build(name).files.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        out[name] = root
    return out


def _open(driver, path: Path) -> None:  # type: ignore[no-untyped-def]
    driver.get_log("browser")  # drain what an earlier page left
    driver.get_log("performance")
    driver.get(path.as_uri())
    driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "if (document.readyState === 'complete') { done(); }"
        "else { window.addEventListener('load', function () { done(); }); }")


def _console_errors(driver) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    """The console's SEVERE messages since the last call."""
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def _requested(driver) -> list[str]:  # type: ignore[no-untyped-def]
    """Every URL the page asked for since the last call (Chromium's performance log)."""
    requested = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requested.append(message["params"]["request"]["url"])
    return requested


# What is no network request: the page's files and data: URLs, and the browser's own
# chrome:// resources (the new-tab page it opens at start loads some into the same performance
# log; seen once in CI: roboto-regular.woff2, a favicon, an icon, all chrome://).
LOCAL = ("file://", "data:", "chrome://", "chrome-untrusted://")


def _clean_load(driver, path: Path) -> None:  # type: ignore[no-untyped-def]
    """Open ``path``; assert no console error and no request outside file://."""
    _open(driver, path)
    errors = _console_errors(driver)
    assert errors == [], f"{path}: console errors {errors}"
    requested = _requested(driver)
    assert requested, f"{path}: the performance log saw no request at all (not even the page)"
    outside = [url for url in requested if not url.startswith(LOCAL)]
    assert outside == [], f"{path}: network requests {outside}"
    resources = driver.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })")
    assert [url for url in resources if not url.startswith(("file://", "data:"))] == []
    broken = driver.execute_script(
        "return Array.prototype.filter.call(document.images, function (i) {"
        "  return !(i.complete && i.naturalWidth > 0); }).map(function (i) { return i.src; })")
    assert broken == [], f"{path}: drawings that did not load: {broken}"


def _pages(root: Path) -> list[Path]:
    return [root / "report.html", *sorted((root / "drawings").glob("*/sheet-*.html"))]


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_pages_load_offline_without_errors(browser, rendered, name: str) -> None:  # type: ignore[no-untyped-def]
    root = rendered[name]
    pages = _pages(root)
    assert len(pages) >= 2, "report.html and at least one sheet page"
    fabrics = len(fabric_drawings.paths(example_build(name).plan))
    for page in pages:
        _clean_load(browser, page)
        shown = browser.execute_script("return document.images.length")
        # report.html shows the fabric drawings; a sheet page its elevation and one-line
        assert shown == (fabrics if page.name == "report.html" else 2), page
    images = sorted((root / "drawings").rglob("*.svg"))
    assert images
    for image in images:
        _clean_load(browser, image)


# Each device rectangle of the drawing, with its rack face's body, read back from the geometry:
# a device is named by its label (a text with data-device), its rectangle is the one of the
# label's slot in the symbol the face's use draws, at the use's x and y (or, drawn plainly,
# the rect with data-device itself). Each label's centre, as drawn (its own rotation
# included), must lie on its rectangle; each use must be drawn (a box of its own).
_READ_RECTS = """
var out = [];
document.querySelectorAll('g[data-rack]').forEach(function (g) {
  var body = g.querySelector('rect[data-rack-body]').getBBox();
  var heightU = Number(g.getAttribute('data-height-u'));
  var unit = body.height / heightU;
  var use = g.querySelector('use');
  var symbol = use ? document.getElementById(use.getAttribute('href').slice(1)) : null;
  var drawn = use ? use.getBBox() : null;
  g.querySelectorAll('[data-device]').forEach(function (r) {
    var box = r.getBBox(), label = null;
    if (r.tagName !== 'rect') {
      var shape = symbol.querySelector('rect[data-slot="' + r.getAttribute('data-slot') + '"]');
      box = {x: shape.x.baseVal.value + use.x.baseVal.value,
             y: shape.y.baseVal.value + use.y.baseVal.value,
             width: shape.width.baseVal.value, height: shape.height.baseVal.value};
      var t = r.getBBox();
      label = new DOMPoint(t.x + t.width / 2, t.y + t.height / 2).matrixTransform(r.getCTM());
    }
    out.push({device: r.getAttribute('data-device'), rack: g.getAttribute('data-rack'),
              face: g.getAttribute('data-face'), bodyX: body.x,
              u: (body.y + body.height - (box.y + box.height)) / unit + 1,
              height: box.height / unit,
              inside: box.x >= body.x && box.x + box.width <= body.x + body.width,
              beside: box.x + box.width <= body.x || box.x >= body.x + body.width,
              right: box.x >= body.x + body.width,
              named: r.tagName === 'rect' ||
                     r.textContent.indexOf(r.getAttribute('data-device')) === 0,
              labelOn: label === null || (label.x >= box.x && label.x <= box.x + box.width &&
                                          label.y >= box.y && label.y <= box.y + box.height),
              used: drawn === null || (drawn.width > 0 && drawn.height > 0)});
  });
});
return out;
"""


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_device_is_drawn_at_its_plan_u(browser, rendered, name: str) -> None:  # type: ignore[no-untyped-def]
    """Front and rear faces: each racked device once on each, inside the body at the plan's U
    and height (full depth: the same U on both); each 0U PDU once, beside the rear face, side
    A on the right as seen from behind; each rack's rear face under its front."""
    plan = example_build(name).plan
    drawn: dict[str, dict[str, dict]] = {"front": {}, "rear": {}}  # type: ignore[type-arg]
    for elevation in sorted((rendered[name] / "drawings").glob("*/elevation-*.svg")):
        _open(browser, elevation)
        for rect in browser.execute_script(_READ_RECTS):
            seen = drawn[rect["face"]]
            assert rect["device"] not in seen, f"{rect['device']} drawn twice on the {rect['face']}"
            assert rect["named"] and rect["labelOn"] and rect["used"], rect
            seen[rect["device"]] = rect
    racked = [d for d in plan.devices if d.u and d.height_u]
    zero_u = [d for d in plan.devices if d.u == 0]
    assert all(d.u is not None for d in plan.devices)  # every device placed: all are drawn
    assert racked
    assert set(drawn["front"]) == {d.name for d in racked}
    assert set(drawn["rear"]) == {d.name for d in racked + zero_u}
    for face in ("front", "rear"):
        for device in racked:
            rect = drawn[face][device.name]
            assert rect["rack"] == device.rack
            assert rect["u"] == pytest.approx(device.u), (face, device)
            assert rect["height"] == pytest.approx(device.height_u), (face, device)
            assert rect["inside"], (face, device)
            assert rect["bodyX"] == drawn["front"][device.name]["bodyX"]  # rear under front
    for device in zero_u:
        rect = drawn["rear"][device.name]
        assert rect["rack"] == device.rack
        assert rect["beside"], device
        assert rect["right"] == device.position.endswith(("A", "C")), device


def test_tables_sort_by_a_click(browser, rendered) -> None:  # type: ignore[no-untyped-def]
    page = rendered["dgx-h100-superpod-4su"] / "report.html"
    _open(browser, page)
    from selenium.webdriver.common.by import By

    table = next(t for t in browser.find_elements(By.CSS_SELECTOR, "table.sortable")
                 if [h.text for h in t.find_elements(By.TAG_NAME, "th")][:3]
                 == ["Rack", "Row", "Load (kW)"])
    header = table.find_elements(By.TAG_NAME, "th")[2]
    for expected in ("ascending", "descending"):
        header.click()
        loads = [float(row.find_elements(By.TAG_NAME, "td")[2].text)
                 for row in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
        assert len(loads) == len(example_build("dgx-h100-superpod-4su").plan.racks)
        assert loads == sorted(loads, reverse=expected == "descending")
        assert header.get_attribute("aria-sort") == expected


def test_screenshots_of_each_page_type(browser, rendered) -> None:  # type: ignore[no-untyped-def]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for name in ("dgx-h100-superpod-4su", "gb200-nvl72"):
        root = rendered[name]
        drawings = root / "drawings"
        row = sorted(p.parent for p in drawings.glob("*/sheet-1.html"))[0]
        shots = {"report": root / "report.html", "sheet": row / "sheet-1.html",
                 "elevation": row / "elevation-1.svg", "power": row / "power-1.svg",
                 "fabric": drawings / "fabric-compute-su.svg",
                 "fabric-sus": drawings / "fabric-compute.svg"}
        for kind, path in shots.items():
            _clean_load(browser, path)
            target = ARTIFACTS / f"{name}--{kind}.png"
            assert browser.save_screenshot(str(target))
            assert target.stat().st_size > 1000


def test_the_checks_see_a_network_request_and_a_console_error(browser, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The load check is not blind: a page that asks a server for an image (TEST-NET-1, RFC
    5737: nothing answers) or logs an error fails it."""
    fetching = tmp_path / "fetching.html"
    fetching.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head>'
                        '<body><img src="http://192.0.2.1/x.png"></body></html>')
    _open(browser, fetching)
    assert "http://192.0.2.1/x.png" in _requested(browser)
    with pytest.raises(AssertionError, match="network requests|console errors"):
        _clean_load(browser, fetching)
    erring = tmp_path / "erring.html"
    erring.write_text('<!DOCTYPE html><html><head><link rel="icon" href="data:,"></head>'
                      '<body><script>console.error("broken")</script></body></html>')
    _open(browser, erring)
    assert [e for e in _console_errors(browser) if "broken" in e["message"]]
    with pytest.raises(AssertionError, match="console errors"):
        _clean_load(browser, erring)
