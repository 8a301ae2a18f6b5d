"""NetBox's parts keyed by the row of racks (issue 39): devices, cables, racks, power panels,
feeds and the feeds' cables. A rack added to a locked example changes only the parts that hold
the new devices, cables, rack and feeds; every other part is byte for byte the same file under
the same name (a part cut by row count shifted rows across every later part; racks.csv and
the power tables were still cut by count)."""

from __future__ import annotations

import csv
import io
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.emit import netbox
from cluster_iac.lock.path import lock_path
from cluster_iac.render import build

EXAMPLES = Path(__file__).parent.parent / "examples"
TABLES = ("netbox/devices/", "netbox/cables/", "netbox/racks/", "netbox/power_panels/",
          "netbox/power_feeds/", "netbox/power_feed_cables/")


def rendered(spec: Path, out: Path) -> dict[str, str]:
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return {str(path.relative_to(out)): path.read_text() for path in out.rglob("*.csv")
            if str(path.relative_to(out)).startswith(TABLES)}


def names(text: str) -> set[str]:
    """The devices a part's rows name: a device's name, a cable's two ends."""
    rows = list(csv.DictReader(io.StringIO(text)))
    return {row[key] for row in rows for key in ("name", "side_a_device", "side_b_device")
            if key in row}


def test_a_rack_added_changes_only_the_parts_of_its_objects(tmp_path: Path) -> None:
    spec = tmp_path / "c.yaml"
    shutil.copy(EXAMPLES / "mixed-a100-h100.yaml", spec)
    shutil.copy(EXAMPLES / "mixed-a100-h100.lock", lock_path(spec))
    before = rendered(spec, tmp_path / "o1")
    text = spec.read_text()
    grown = text.replace('count: 16, hostname: "a100-##", racks: "a[01-04]"',
                         'count: 20, hostname: "a100-##", racks: "a[01-05]"')
    grown = grown.replace('{names: "a[01-04]"', '{names: "a[01-05]"')
    assert grown.count("a[01-05]") == 2
    spec.write_text(grown)
    after = rendered(spec, tmp_path / "o2")

    new = {f"a100-{n}" for n in range(17, 21)} | {"a05-pdu-a", "a05-pdu-b"} | {
        "a05", "a05-feed-a", "a05-feed-b"}  # its rack and its PDUs' feeds
    assert set(before) <= set(after)  # no part renamed or gone
    changed = {path for path in before if before[path] != after[path]}
    added = set(after) - set(before)
    for path in changed | added:  # each holds new devices or their cables
        assert names(after[path]) & new, path
    for path in before.keys() - changed:
        assert not names(after[path]) & new, path
    assert changed | added and len(before.keys() - changed) >= 2
    for path in after:  # each part within what imports inside the web server's timeout
        rows = after[path].count("\n") - 1
        assert 1 <= rows <= netbox.rows_per_part(path.split("/")[1])
    assert {path.split("/")[2] for path in changed | added} == {"a"}  # row a's parts only


def test_racks_and_power_tables_in_parts_per_row_a_rack_added_shifts_no_other_row(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Parts of two rows each (as a 100,000-GPU cluster's tables of thousands of racks and
    feeds are cut at 120): a rack added to the first row of racks changes that row's parts
    only. Cut by count, as before, it pushed a rack of row b into another part, and every
    part after it changed."""
    monkeypatch.setattr(netbox, "rows_per_part", lambda table: 2)
    spec = tmp_path / "c.yaml"
    shutil.copy(EXAMPLES / "mixed-a100-h100.yaml", spec)
    shutil.copy(EXAMPLES / "mixed-a100-h100.lock", lock_path(spec))
    tables = ("netbox/racks", "netbox/power_")

    def parts() -> dict[str, str]:
        files = build(spec, jobs=1).files
        return {path: text for path, text in files.items() if path.startswith(tables)}

    before = parts()
    text = spec.read_text()
    spec.write_text(text.replace('count: 16, hostname: "a100-##", racks: "a[01-04]"',
                                 'count: 20, hostname: "a100-##", racks: "a[01-05]"')
                    .replace('{names: "a[01-04]"', '{names: "a[01-05]"'))
    after = parts()
    assert set(before) <= set(after)
    changed = {path for path in after if before.get(path) != after[path]}
    assert changed and {path.split("/")[2] for path in changed} == {"a"}, sorted(changed)
    assert any(path.split("/")[2] == "b" for path in before)  # row b's parts: kept
    for path, text in after.items():
        assert 1 <= text.count("\n") - 1 <= 2, path
