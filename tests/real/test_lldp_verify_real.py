"""`cluster-iac fabric verify` and `reconcile` on LLDP tables printed by the real lldpd: a
sample of the RoCE example (examples/spectrum-x-roce.yaml with 4 hosts of 2 rails, so 2
leaves and 1 spine, and its management network) built as network namespaces, one per
device, joined by veth pairs named as the plan names the ports, each running lldpd under its
planned name; a switch port has the alias a compute switch's switches/<name>/interfaces
gives it (the management switches' alike), so lldpd sends it by name (port id subtype
ifname). The cabling as planned gives no finding; one cable removed is MISSING by its label;
two cables swapped at the leaf are MISWIRED, both named.

The lab's clean tables are what tests/data/lldp/ holds (see its README): with
CLUSTER_IAC_LLDP_CAPTURE=DIR this test writes them there again.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.cli.main import main
from cluster_iac.formats.lldpcli import Neighbor, parse
from cluster_iac.plan import Plan
from cluster_iac.plan.physical import Cable
from cluster_iac.reconcile.ethernet import silent_end
from cluster_iac.render import build
from tests.lldp_fixtures import DATA, sample_spec
from tests.real import netns
from tests.real.netns import Lab

pytestmark = pytest.mark.real

def _links(plan: Plan) -> list[Cable]:
    """The planned Ethernet cables between devices that run lldpd (no PDU, no BMC)."""
    kinds = {d.name: d.kind for d in plan.devices}
    return [c for c in plan.cables.rows() if c.link == "ethernet"
            and not silent_end(kinds, c, c.a_device) and not silent_end(kinds, c, c.b_device)]


def _expected(wiring: list[tuple[str, str, str, str]]) -> dict[str, set[tuple[str, str, str]]]:
    """Each namespace's table once lldpd has heard every link: (interface, system, port)."""
    out: dict[str, set[tuple[str, str, str]]] = {}
    for a, a_port, b, b_port in wiring:
        out.setdefault(a, set()).add((a_port, b, b_port))
        out.setdefault(b, set()).add((b_port, a, a_port))
    return out


def _table(lab: Lab, device: str, form: str = "json", what: str = "neighbors") -> str:
    """`lldpcli show WHAT -f FORM` on the device (WHAT: neighbors, or chassis: its own)."""
    socket = lab.rundir(device, "lldpd") / "lldpd.socket"
    return lab.run(device, netns.tool("lldpcli"), "-u", str(socket), "show", what,
                   "-f", form).stdout


def _settled(lab: Lab, devices: list[str], wiring: list[tuple[str, str, str, str]]) -> None:
    """Wait until every lldpd's table is exactly the wiring (a removed veth's neighbour gone)."""
    expected = _expected(wiring)
    for device in devices:
        want = expected.get(device, set())

        def probe(device: str = device, want: set[tuple[str, str, str]] = want) -> bool:
            rows = parse(_table(lab, device)).neighbors
            return {(r.interface, r.system, _port(r)) for r in rows} == want

        netns.wait_for(f"{device}'s LLDP table", probe, timeout=30, step=0.5)


def _port(row: Neighbor) -> str:
    """A neighbour's port name: lldpd sends an interface with an alias by its name (subtype
    ifname, the alias as description), one without by its MAC (the name as description)."""
    return row.port_id if row.port_type == "ifname" else row.port_descr


def _aliases(plan: Plan) -> dict[tuple[str, str], str]:
    """Each switch port's alias as switches/<name>/interfaces sets it ('alias gpu-01:rdma0
    CF-r01.U01.rdma0': the planned peer and the cable's label)."""
    kinds = {d.name: d.kind for d in plan.devices}
    out = {}
    for c in _links(plan):
        for here, port, there, far in ((c.a_device, c.a_port, c.b_device, c.b_port),
                                       (c.b_device, c.b_port, c.a_device, c.a_port)):
            if kinds[here] == "switch":
                out[(here, port)] = f"{there}:{far} {c.cable_id}"
    return out


def _connect(lab: Lab, aliases: dict[tuple[str, str], str],
             wiring: list[tuple[str, str, str, str]]) -> None:
    """A veth per link; a switch port gets its planned alias whatever it is plugged into."""
    for a, a_port, b, b_port in wiring:
        lab.link((a, a_port), (b, b_port))
        for device, port in ((a, a_port), (b, b_port)):
            if (device, port) in aliases:
                lab.ip(device, "link", "set", port, "alias", aliases[(device, port)])


def _collect(lab: Lab, devices: list[str], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.json"):
        old.unlink()
    for device in devices:
        (folder / f"{device}.lldp.json").write_text(_table(lab, device))
    return folder


def _verify(spec: Path, *args: str) -> tuple[int, list[str], str]:
    result = CliRunner().invoke(main, ["fabric", "verify", str(spec), *args])
    return result.exit_code, result.stdout.splitlines(), result.stderr


def _rewire(lab: Lab, aliases: dict[tuple[str, str], str],
            old: list[tuple[str, str, str, str]], new: list[tuple[str, str, str, str]]) -> None:
    for a, a_port, _, _ in old:
        lab.ip(a, "link", "del", a_port)
    _connect(lab, aliases, new)


def test_lldp_tables_of_a_roce_sample(tmp_path: Path) -> None:
    netns.require("lldpd", "lldpcli")
    spec = sample_spec(tmp_path)
    plan = build(spec).plan
    cables = _links(plan)
    wiring = [(c.a_device, c.a_port, c.b_device, c.b_port) for c in cables]
    devices = sorted({d for a, _, b, _ in wiring for d in (a, b)})
    assert {"eth-leaf-su1-r1", "eth-leaf-su1-r2", "eth-spine-1", "gpu-04"} <= set(devices)
    assert len([c for c in cables if c.network == "compute"]) == 24
    with Lab(devices) as lab:
        aliases = _aliases(plan)
        _connect(lab, aliases, wiring)
        for device in devices:
            netns.start_lldpd(lab, device, device)
        _settled(lab, devices, wiring)

        # as planned: no finding, exit 0, from a folder and through reconcile
        clean = _collect(lab, devices, tmp_path / "clean")
        code, out, err = _verify(spec, str(clean))
        assert code == 0, out + [err]
        assert out == [f"{clean}: the Ethernet cabling matches the plan ({len(cables)} of "
                       f"{len(cables) + 12} cables seen from {len(devices)} LLDP table(s); "
                       f"12 cable(s) to PDUs or BMCs, which send no LLDP, not judged)"], out
        result = CliRunner().invoke(main, ["reconcile", str(spec),
                                           *map(str, sorted(clean.glob("*.json")))])
        assert result.exit_code == 0, result.output
        assert "error[" not in result.output
        # a file named after no device says whose table it is by `show chassis` beside it
        own = tmp_path / "own" / "table.json"
        own.parent.mkdir()
        own.write_text(_table(lab, "gpu-01", what="chassis") + _table(lab, "gpu-01"))
        code, out, err = _verify(spec, str(own))
        assert code == 0 and "3 of 3 cables seen from 1 LLDP table(s)" in out[0], out + [err]
        capture = os.environ.get("CLUSTER_IAC_LLDP_CAPTURE")
        if capture:
            _collect(lab, devices, Path(capture))
            for form in ("json0", "chassis"):
                (Path(capture) / form).mkdir(exist_ok=True)
            (Path(capture) / "json0" / "gpu-01.lldp.json").write_text(
                _table(lab, "gpu-01", "json0"))
            (Path(capture) / "chassis" / "gpu-01.chassis.json").write_text(
                _table(lab, "gpu-01", what="chassis"))
        # the saved real tables are what lldpd prints for this lab (but for MACs and clock)
        assert len(list(DATA.glob("*.lldp.json"))) == len(devices)
        for saved in sorted(DATA.glob("*.lldp.json")):
            fresh = parse((clean / saved.name).read_text()).neighbors
            kept = parse(saved.read_text()).neighbors
            assert [(r.interface, r.system, r.port_descr, r.port_type) for r in fresh] == [
                (r.interface, r.system, r.port_descr, r.port_type) for r in kept], saved.name

        # one leaf-spine cable removed: MISSING by its label, nothing else
        gone = next(c for c in cables if c.tier == "leaf-spine")
        _rewire(lab, aliases, [(gone.a_device, gone.a_port, gone.b_device, gone.b_port)], [])
        less = [w for w in wiring if w != (gone.a_device, gone.a_port, gone.b_device,
                                           gone.b_port)]
        _settled(lab, devices, less)
        code, out, err = _verify(spec, str(_collect(lab, devices, tmp_path / "removed")))
        assert code == 1
        assert [line.split(":")[0] for line in out] == [f"MISSING {gone.cable_id}"], out
        assert f"{gone.a_rack}/U{gone.a_u:02d} {gone.a_device} {gone.a_port}" in out[0], out
        assert "1 missing, 0 miswired, 0 extra" in err
        _rewire(lab, aliases, [], [(gone.a_device, gone.a_port, gone.b_device, gone.b_port)])

        # two host cables swapped at the leaf: both MISWIRED, each with what is found
        one, two = [c for c in cables if c.b_device == "eth-leaf-su1-r1"
                    and c.tier == "node-leaf"][:2]
        swapped = [(one.a_device, one.a_port, one.b_device, two.b_port),
                   (two.a_device, two.a_port, two.b_device, one.b_port)]
        _rewire(lab, aliases, [(one.a_device, one.a_port, "", ""),
                               (two.a_device, two.a_port, "", "")], swapped)
        now = [w for w in wiring if w[:2] not in {(one.a_device, one.a_port),
                                                 (two.a_device, two.a_port)}] + swapped
        _settled(lab, devices, now)
        folder = _collect(lab, devices, tmp_path / "swapped")
        code, out, err = _verify(spec, str(folder))
        assert code == 1
        assert [line.split(":")[0] for line in out] == [f"MISWIRED {one.cable_id}",
                                                        f"MISWIRED {two.cable_id}"], out
        assert f"found a/r01/U01 {one.a_device} {one.a_port} <-> " \
               f"a/net1/U37 eth-leaf-su1-r1 {two.b_port}" in out[0], out
        assert "0 missing, 2 miswired, 0 extra" in err
        result = CliRunner().invoke(main, ["reconcile", str(spec),
                                           *map(str, sorted(folder.glob("*.json")))])
        assert result.exit_code == 1
        codes = re.findall(r"error\[(\S+)\] (\S+):", result.stdout)
        assert codes == [("RECONCILE-LLDP-MISWIRED", one.cable_id),
                         ("RECONCILE-LLDP-MISWIRED", two.cable_id)], result.stdout
        assert f"label {one.cable_id}" in result.stdout
        assert json.loads((folder / "gpu-01.lldp.json").read_text())["lldp"]
