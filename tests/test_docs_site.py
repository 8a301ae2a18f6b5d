"""The documentation site builds: `mkdocs build --strict` (a broken link or anchor, a README
section a page includes that is gone, or a codes.yaml the codes hook cannot read fails it), and
the README stays a short front page whose links reach the pages."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
GENERATED = {"codes.md"}  # made by docs/hooks/codes.py from cluster_iac/codes.yaml
MAX_README_LINES = 400


def _mkdocs() -> None:
    try:
        import material  # noqa: F401
        import mkdocs  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("mkdocs-material is missing: install the '[test]' extras")
        pytest.skip("mkdocs-material is not installed (pip install '.[docs]')")


def _build(root: Path, site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(root / "mkdocs.yml"), "-d", str(site)],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_the_site_builds_strict(tmp_path: Path) -> None:
    _mkdocs()
    result = _build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    codes = (tmp_path / "site" / "codes" / "index.html").read_text()
    from ruamel.yaml import YAML

    listed = YAML(typ="safe").load((ROOT / "cluster_iac" / "codes.yaml").read_text())
    shown = set(re.findall(r'<h3 id="([a-z0-9-]+)"', codes))
    assert shown == {code.lower() for code in listed}


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    """--strict is what makes a stale page fail: a link to a page or anchor that is gone."""
    _mkdocs()
    root = tmp_path / "repo"
    shutil.copytree(DOCS, root / "docs")
    shutil.copy(ROOT / "mkdocs.yml", root)
    shutil.copy(README, root)
    (root / "cluster_iac").mkdir()
    shutil.copy(ROOT / "cluster_iac" / "codes.yaml", root / "cluster_iac")
    page = root / "docs" / "power.md"
    page.write_text(page.read_text() + "\nSee [the lock](lock.md#no-such-anchor).\n")
    result = _build(root, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-anchor" in result.stdout + result.stderr


def test_readme_is_a_short_front_page() -> None:
    lines = README.read_text().count("\n")
    assert lines < MAX_README_LINES, f"README.md has {lines} lines: move text to a page in docs/"


def test_readme_links_every_page_and_only_pages_that_exist() -> None:
    text = README.read_text()
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)(?:#[\w-]+)?\)", text))
    pages = {path.name for path in DOCS.glob("*.md")} - {"index.md"}
    assert linked <= pages, f"README links pages that do not exist: {sorted(linked - pages)}"
    assert pages <= linked, f"pages the README's table does not link: {sorted(pages - linked)}"


def test_every_page_is_in_the_nav() -> None:
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), re.M))
    pages = {path.name for path in DOCS.glob("*.md")} | GENERATED
    assert nav == pages


def test_the_architecture_page_draws_the_floors_of_test_house() -> None:
    """docs/architecture.md's table gives every package of tests/test_house.py's FLOORS, on
    its floor."""
    from tests.test_house import FLOORS

    page = (DOCS / "architecture.md").read_text()
    drawn = {name: int(floor) for floor, name in
             re.findall(r"^\| (\d+) \| `cluster_iac/(\w+)(?:/|\.py)`", page, re.M)}
    assert drawn == {package: floor for floor, packages in enumerate(FLOORS)
                     for package in packages}
