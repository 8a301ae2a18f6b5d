"""`cluster-iac reconcile` on PDU outlet readings (Sentry4 st4OutletActivePower): the
hand-made sample in net-snmp's snmpwalk output format (tests/data/reconcile/README.md) is the
seed example's r01-pdu-a as planned; planted differences are found by code and place, in
snmpwalk's three forms and in Prometheus' exposition format."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.reconcile import pdu
from cluster_iac.reconcile.finding import ReadError
from tests.conftest import ROOT
from tests.reconcile_fixtures import DATA

SPEC = ROOT / "examples" / "seed-64gpu-h100.yaml"
SAMPLE = (DATA / "pdu-sentry4-snmpwalk-sample.txt").read_text()


def _run(folder: Path, text: str, name: str = "r01-pdu-a.snmpwalk") -> tuple[int, list[str]]:
    path = folder / name
    path.write_text(text)
    result = CliRunner().invoke(main, ["reconcile", str(SPEC), str(path)])
    return result.exit_code, [line.split(": ", 1)[1] for line in result.stdout.splitlines()
                              if "error[" in line]


def _set(text: str, outlet: int, watts: int) -> str:
    return re.sub(rf"(st4OutletActivePower\.1\.1\.{outlet} = INTEGER: )-?\d+",
                  rf"\g<1>{watts}", text)


def test_the_sample_is_the_plan(tmp_path: Path) -> None:
    code, found = _run(tmp_path, SAMPLE)
    assert (code, found) == (0, [])


def test_planted_differences_by_code_and_place(tmp_path: Path) -> None:
    text = _set(_set(_set(SAMPLE, 3, 0), 54, 230), 13, 0)
    code, found = _run(tmp_path, text)
    assert code == 1
    codes = [(line.split("]")[0] + "]", line.split("] ")[1].split(":")[0]) for line in found]
    assert codes == [
        ("error[RECONCILE-PDU-UNPLANNED-DRAW]", "r01-pdu-a outlet 54, rack r01"),
        ("error[RECONCILE-PDU-NO-DRAW]", "compute01 PSU3 (r01-pdu-a outlet 3, rack r01)"),
        ("error[RECONCILE-PDU-NO-DRAW]", "mgmt-r01-1 PSU1 (r01-pdu-a outlet 13, rack r01)"),
        ("error[RECONCILE-PDU-PSU-COUNT]", "compute01 (rack r01 U01)"),
        ("error[RECONCILE-PDU-PSU-COUNT]", "mgmt-r01-1 (rack r01 U48)"),
    ], found
    assert "draws 230 W where the plan has no cord" in found[0]
    assert "draws through 5 of its 6 planned cords; idle: PSU3 (r01-pdu-a outlet 3)" in found[3]
    assert "(POWER-REDUNDANCY on rack r01)" in found[3]


def test_a_device_wholly_off_is_its_cords_not_a_psu_count(tmp_path: Path) -> None:
    text = SAMPLE
    for outlet in range(1, 7):  # compute01's six cords
        text = _set(text, outlet, 0)
    code, found = _run(tmp_path, text)
    assert [line.split("]")[0] for line in found] == ["error[RECONCILE-PDU-NO-DRAW"] * 6


@pytest.mark.parametrize("form", ["numeric", "no-mib", "prometheus"])
def test_every_form_reads_the_same(tmp_path: Path, form: str) -> None:
    text = _set(SAMPLE, 54, 230)
    rows = re.findall(r"st4OutletActivePower\.1\.1\.(\d+) = INTEGER: (\d+) Watts", text)
    if form == "numeric":  # snmpwalk -On
        text = "".join(f".1.3.6.1.4.1.1718.4.1.8.3.1.7.1.1.{o} = INTEGER: {w}\n"
                       for o, w in rows)
    elif form == "no-mib":  # snmpwalk without the Sentry4-MIB
        text = "".join(f"SNMPv2-SMI::enterprises.1718.4.1.8.3.1.7.1.1.{o} = INTEGER: {w}\n"
                       for o, w in rows)
    else:  # snmp_exporter's answer, federated with the target's pdu label
        text = ("# HELP st4OutletActivePower Measured real power of the outlet\n"
                "# TYPE st4OutletActivePower gauge\n" + "".join(
                    f'st4OutletActivePower{{instance="r01-pdu-a",pdu="r01-pdu-a",'
                    f'st4InputCordIndex="1",st4OutletIndex="{o}",st4UnitIndex="1"}} {w}\n'
                    for o, w in rows))
    code, found = _run(tmp_path, text, "dump.txt" if form == "prometheus" else
                       "r01-pdu-a.txt")
    assert code == 1 and len(found) == 1 and "r01-pdu-a outlet 54" in found[0], found


def test_a_broken_line_is_located() -> None:
    with pytest.raises(ReadError) as info:
        pdu.read(SAMPLE.replace("st4OutletActivePower.1.1.7 = INTEGER: 560 Watts",
                                "st4OutletActivePower.1.1.7 = STRING: x"))
    assert info.value.line == 54 + 7
    with pytest.raises(ReadError):
        pdu.read('st4OutletActivePower{st4OutletIndex="1"} 5\n')


def test_a_pdu_the_plan_does_not_have(tmp_path: Path) -> None:
    code, found = _run(tmp_path, SAMPLE, "r99-pdu-z.snmpwalk")
    assert code == 1 and found[0].startswith("error[RECONCILE-UNKNOWN-HOST] r99-pdu-z")


def test_a_real_sentry4_walk_is_read_column_by_column() -> None:
    """A real Sentry4 walk as published (tests/data/reconcile/README.md): every st4Outlet
    column of two linked units' first outlets. The reader takes the two st4OutletActivePower
    readings by unit, cord and outlet, and passes over the other columns, the ActivePower
    status column among them."""
    real = (DATA / "pdu-sentry4-snmpwalk-real-excerpt.txt").read_text()
    assert pdu.detect(real)
    assert pdu.read(real) == {("", 1, 1, 1): 0, ("", 2, 1, 1): 0}
    broken = real.replace("st4OutletActivePower.2.1.1 = INTEGER: 0 Watts",
                          "st4OutletActivePower.2.1.1 = STRING: 0 Watts")
    with pytest.raises(ReadError) as raised:
        pdu.read(broken)
    assert raised.value.line == real.splitlines().index(
        "Sentry4-MIB::st4OutletActivePower.2.1.1 = INTEGER: 0 Watts") + 1
