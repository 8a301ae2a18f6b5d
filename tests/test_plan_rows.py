"""The plan's tables whose rows are made by ``tuple.__new__`` over zipped columns (power
rows, devices, DNS records, lock entries: plan/power_rows.py, compile/plan_cabling.py,
compile/plan_boot.py, lock/fast.py) hold whole rows: a named tuple's ``_make`` checks its
field count, tuple.__new__ does not, so a column left out or added would make short or long
rows unnoticed. Each row of every example has exactly its type's fields, each field set."""

from __future__ import annotations

from typing import Any

from tests.conftest import EXAMPLE_IDS, example_build
from tests.facility_fixtures import compile_data, example_data

TABLES = ("power_devices", "power_cords", "power_feeds", "power_circuits", "power_pdus",
          "power_lines", "power_outages", "devices")


def _whole(rows: Any) -> None:
    for row in rows:
        assert len(row) == len(type(row)._fields), (type(row).__name__, row)


def test_every_row_has_all_its_fields() -> None:
    seen = dict.fromkeys((*TABLES, "records", "lock"), 0)
    for name in EXAMPLE_IDS:
        plan = example_build(name).plan
        for table in TABLES:
            rows = getattr(plan, table)
            _whole(rows)
            seen[table] += len(rows)
        _whole(plan.boot.records)
        seen["records"] += len(plan.boot.records)
        entries = [entry for group in plan.lock.groups.values() for entry in group.values()]
        _whole(entries)
        assert all(isinstance(e.value, tuple) and isinstance(e.retired, bool)
                   for e in entries)
        seen["lock"] += len(entries)
    # no example takes a device down in a power failure: the A/B layout of test_power_flow
    # (3 of 6 PSUs per side for 4 required) does, so the outage rows are checked there
    data = example_data("dgx-h100-superpod-4su")
    data["power"]["pdu_profiles"]["dgx-3pdu"].update(layout="ab", breaker_a=60,
                                                     rated_100_percent=False)
    outages = compile_data(data).power_outages
    _whole(outages)
    seen["power_outages"] += len(outages)
    assert all(seen.values()), seen  # rows of each table, so the check sees them
