"""The subnet manager files without OpenSM (tests/real/test_opensm_real.py runs the real one):
the topology's GUIDs are marked placeholders and read back as written, the routing engine
follows the topology, the spec's subnet_manager is checked at its lines, and a name that
would break a record is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster_iac.emit.subnet_manager import render
from cluster_iac.formats.ibnetdiscover import (
    CA_GUID_BASE,
    IbEnd,
    IbNode,
    Topology,
    TopologyError,
    check_descriptions,
    parse,
    placeholder_guid,
    placeholder_guids,
    topology_text,
)
from cluster_iac.plan.subnet import infiniband_fabrics, routing, topology
from cluster_iac.render import PipelineError, build
from tests.conftest import EXAMPLE_IDS, ROOT, example_build

SEED = ROOT / "examples" / "seed-64gpu-h100.yaml"


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_every_infiniband_fabric_has_its_files(name: str) -> None:
    plan = example_build(name).plan
    files = render(plan)
    for network in infiniband_fabrics(plan):
        for leaf in ("topology.ibnetdiscover", "opensm.conf", "partitions.conf"):
            assert f"opensm/{network}/{leaf}" in files
    ethernet = [n for n, f in plan.fabrics.items() if f.technology != "infiniband"]
    assert not any(path.startswith(tuple(f"opensm/{n}/" for n in ethernet)) for path in files)


@pytest.mark.parametrize("name", ["dgx-h100-superpod-4su", "mixed-a100-h100"])
def test_topology_reads_back_as_the_plans_links_with_placeholder_guids(name: str) -> None:
    plan = example_build(name).plan
    for network in infiniband_fabrics(plan):
        text = render(plan)[f"opensm/{network}/topology.ibnetdiscover"]
        assert "GUIDS ARE PLACEHOLDERS" in text
        read = parse(text)
        # every GUID locally administered (0x02 in the first octet): never a vendor's
        assert {node.guid >> 56 for node in read.nodes.values()} == {0x02}
        links = {frozenset(((read.nodes[a.node_id].description, a.port),
                            (read.nodes[b.node_id].description, b.port)))
                 for a, b in read.pairs()}
        planned = set()
        for link in plan.links.rows():
            if link.network != network:
                continue
            host = plan.fabric_wiring[network].tier.get(link.a_device) == "node"
            a = (f"{link.a_device} {link.a_port}", 1) if host else (link.a_device,
                                                                     int(link.a_port[1:]))
            planned.add(frozenset((a, (link.b_device, int(link.b_port[1:])))))
        assert links == planned


def test_routing_engine_follows_the_topology() -> None:
    superpod = example_build("dgx-h100-superpod-4su").plan
    assert routing(superpod, "compute").engine == "ftree"
    seed = example_build("seed-64gpu-h100").plan
    assert seed.fabrics["compute"].tiers == 1
    assert routing(seed, "compute").engine == "updn"
    conf = render(seed)["opensm/compute/opensm.conf"]
    assert "routing_engine updn\n" in conf
    assert re.search(r"# routing engine: one switch tier.*\nrouting_engine updn", conf, re.S)


def test_master_and_standby_priorities_come_from_the_spec() -> None:
    files = render(example_build("seed-64gpu-h100").plan)
    master = files["opensm/compute/opensm.conf"]
    standby = files["opensm/compute/opensm-standby.conf"]
    assert "\nsm_priority 15\n" in master and "mds1 (the master)" in master
    assert "\nsm_priority 14\n" in standby and "standbys: oss1" in standby
    # the simulator runs its subnet manager from the first node: the master's adapter
    assert re.search(r'^Ca\t1 "[^"]+"\t\t# "mds1 ib0"',
                     files["opensm/compute/topology.ibnetdiscover"].split("\n\n")[1], re.M)


def test_partition_key_members_are_the_slurm_partitions_adapters() -> None:
    plan = example_build("seed-64gpu-h100").plan
    text = render(plan)["opensm/compute/partitions.conf"]
    top = topology(plan, "compute")
    members = set(next(p for p in plan.partitions if p.name == "gpu-training").nodes)
    want = {f"0x{n.guid + 1:016x}" for n in top.nodes.values()
            if n.kind == "Ca" and n.description.split()[0] in members}
    block = text.split("gpu-training=0x0002, ipoib, defmember=full :", 1)[1]
    assert set(re.findall(r"0x[0-9a-f]{16}", block)) == want and want
    assert "PLACEHOLDERS" in text


def _seed_with(tmp_path: Path, block: str, technology: str = "infiniband") -> Path:
    text = SEED.read_text()
    text = re.sub(r"    subnet_manager:.*\n(      .*\n)+", block, text)
    text = text.replace("    technology: infiniband\n    design: plain",
                        f"    technology: {technology}\n    design: plain")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    return spec


@pytest.mark.parametrize(("block", "code", "path", "hint"), [
    ("    subnet_manager: {hosts: [mds9]}\n", "FABRIC-SUBNET-MANAGER",
     ("fabric", "compute", "subnet_manager", "hosts", 0), "mds1"),
    ("    subnet_manager: {hosts: [slurm-head1]}\n", "FABRIC-SUBNET-MANAGER",
     ("fabric", "compute", "subnet_manager", "hosts", 0), "mds1"),
    ("    subnet_manager: {partition_keys: {gpu-trainin: 2}}\n", "FABRIC-PKEY",
     ("fabric", "compute", "subnet_manager", "partition_keys", "gpu-trainin"), "gpu-training"),
])
def test_subnet_manager_errors_are_located(tmp_path: Path, block: str, code: str,
                                           path: tuple[str | int, ...], hint: str) -> None:
    with pytest.raises(PipelineError) as info:
        build(_seed_with(tmp_path, block), emit=False)
    found = [d for d in info.value.diagnostics if d.code == code]
    assert found and found[0].path == path, info.value.diagnostics
    assert hint in (found[0].hint or "") + found[0].message
    source = info.value.source
    assert source is not None
    assert source.source_line(source.locate(path).line) == block.rstrip("\n")


def test_a_subnet_manager_on_ethernet_is_an_error() -> None:
    from cluster_iac.base.errors import CompileError
    from tests.facility_fixtures import compile_data
    from tests.test_fabric import superpod_spec

    data = superpod_spec(1, technology="roce", leaf_switch="sn5600")
    data["node_types"]["dgx"]["nics"] = [{"role": "compute", "model": "cx7-400gbe", "count": 8},
                                         {"role": "inband", "model": "eth-1g"},
                                         {"role": "bmc", "model": "eth-1g"}]
    data["fabric"]["compute"].pop("scalable_unit_nodes")
    data["fabric"]["compute"]["subnet_manager"] = {"hosts": []}
    with pytest.raises(CompileError) as caught:
        compile_data(data)
    (diag,) = caught.value.diagnostics
    assert (diag.code, diag.path) == ("FABRIC-SUBNET-MANAGER",
                                      ("fabric", "compute", "subnet_manager"))
    assert "InfiniBand only" in diag.message


def test_a_partition_key_out_of_range_is_refused(tmp_path: Path) -> None:
    spec = _seed_with(tmp_path, "    subnet_manager: {partition_keys: {gpu-training: 0x7fff}}\n")
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    assert any(d.path[-1] == "gpu-training" for d in info.value.diagnostics)


def test_a_name_that_would_break_a_record_is_refused() -> None:
    top = Topology()
    top.nodes["S-1"] = IbNode("Switch", "S-1", 1, 2, 'leaf"\nSwitch 2 "S-9"')
    with pytest.raises(ValueError, match="cannot be an InfiniBand node description"):
        topology_text(top)


def test_names_checked_together_are_refused_as_one_by_one() -> None:
    """check_descriptions (the fast writer's: one search of the joined names) refuses the
    first name that check_description refuses, naming it; placeholder_guids is
    placeholder_guid of each name."""
    check_descriptions(["leaf-1", "dgx-001", "ib0"])
    for bad in ('a"b', "a\nb", "a#b", "a\x07b"):
        with pytest.raises(ValueError, match=re.escape(repr(bad))):
            check_descriptions(["leaf-1", bad, 'c"d'])
    names = ["dgx-001 ib0", "dgx-001 ib1", "ib-leaf-1"]
    assert placeholder_guids(names, CA_GUID_BASE) == [placeholder_guid(n, CA_GUID_BASE)
                                                      for n in names]


def test_a_port_cabled_twice_is_refused() -> None:
    top = Topology()
    top.nodes["S-1"] = IbNode("Switch", "S-1", 1, 4, "leaf")
    top.add_link(IbEnd("S-1", 1), IbEnd("S-1", 2))
    with pytest.raises(ValueError, match="cabled twice"):
        top.add_link(IbEnd("S-1", 1), IbEnd("S-1", 3))


def _rewired(b_port: dict[int, str]) -> str:
    """The seed's compute topology written by the fast writer with some links' switch ports
    replaced (link row -> port)."""
    from dataclasses import replace

    from cluster_iac.emit.subnet_manager import _header
    from cluster_iac.emit.subnet_topology import topology_chunks

    plan = example_build("seed-64gpu-h100").plan
    ports = tuple(b_port.get(i, port) for i, port in enumerate(plan.links.b_port))
    plan = replace(plan, links=replace(plan.links, b_port=ports))
    return "".join(topology_chunks(plan, "compute", _header(plan, "compute")))


def test_the_fast_writer_refuses_a_switch_port_cabled_twice_or_missing() -> None:
    """The writer places each line in its switch's slot for its port: a second cable in a
    port, or a port beyond the switch's, is refused, naming the port, as the plain
    Topology.add_link refuses it."""
    plan = example_build("seed-64gpu-h100").plan
    links = plan.links
    rows = [i for i, net in enumerate(links.network) if net == "compute"]
    first = rows[0]
    second = next(i for i in rows[1:] if links.b_device[i] == links.b_device[first])
    with pytest.raises(ValueError, match=f"port {links.b_port[first][1:]} of "
                                         f"{links.b_device[first]} is cabled twice"):
        _rewired({second: links.b_port[first]})
    with pytest.raises(ValueError, match=f"{links.b_device[second]} has no port 999"):
        _rewired({second: "p999"})


def test_a_file_not_in_the_format_names_its_line() -> None:
    with pytest.raises(TopologyError) as info:
        parse('Switch\t4 "S-1"\t\t# "leaf"\n[1]\t"S-2"[1]\nrm -rf /\n')
    assert info.value.line == 3


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_the_fast_topology_writer_is_the_plain_ones_text(name: str) -> None:
    """emit/subnet_topology.py writes from the link columns what ibnetdiscover.topology_text
    writes from plan.subnet.topology (the oracle), byte for byte."""
    from cluster_iac.emit.subnet_manager import _header

    plan = example_build(name).plan
    files = render(plan)
    for network in infiniband_fabrics(plan):
        oracle = topology_text(topology(plan, network), _header(plan, network))
        assert files[f"opensm/{network}/topology.ibnetdiscover"] == oracle


@pytest.mark.parametrize("gpus", [2048, 4096])
def test_the_fast_topology_writer_is_the_plain_ones_text_on_bench_specs(gpus: int) -> None:
    """The same on the benchmark's specs (tests/benchmarks/bench_scale.py: leaves, spines
    and cores, thousands of adapters), where the writer takes its links as slices."""
    from cluster_iac.compile import compile_plan
    from cluster_iac.emit.subnet_manager import _header
    from cluster_iac.load.loader import load_spec_text
    from cluster_iac.spec.parse import parse_spec
    from tests.benchmarks.bench_scale import spec_yaml

    plan = compile_plan(parse_spec(load_spec_text(spec_yaml(gpus))[0]))
    text = render(plan)["opensm/compute/topology.ibnetdiscover"]
    assert text.count("\nCa\t1 ") == gpus
    assert text == topology_text(topology(plan, "compute"), _header(plan, "compute"))


def test_accepted_guids_are_written_where_the_lock_holds_them() -> None:
    """Some GUIDs accepted (a switch's node GUID, an adapter's port GUID): the export writes
    those, placeholders for the rest, says how many are delivered, and the fast writer is
    still the oracle's text."""
    from dataclasses import replace

    from cluster_iac.emit.subnet_manager import _header
    from cluster_iac.plan.facts import NODE, Facts

    plan = example_build("seed-64gpu-h100").plan
    held = {("ib-leaf-1", NODE): 0x0002_C903_00AB_0010, ("compute01", "ib0"): 0x0002_C903_00AB_0021}
    plan = replace(plan, facts=Facts({}, held))
    text = render(plan)["opensm/compute/topology.ibnetdiscover"]
    assert text == topology_text(topology(plan, "compute"), _header(plan, "compute"))
    assert "# GUIDs: 2 of the 19 nodes' are the delivered ones the lock holds" in text
    assert "THE OTHER NODES' GUIDS ARE PLACEHOLDERS" in text
    top = parse(text)
    leaf = next(n for n in top.nodes.values() if n.description == "ib-leaf-1")
    assert leaf.guid == 0x0002_C903_00AB_0010
    adapter = next(i for i, n in top.nodes.items() if n.description == "compute01 ib0")
    assert top.port_guids[IbEnd(adapter, 1)] == 0x0002_C903_00AB_0021
    assert top.nodes[adapter].guid == 0x0002_C903_00AB_0020  # ibsim's port 1: node + 1
    others = [n.guid for n in top.nodes.values() if n.node_id not in (leaf.node_id, adapter)]
    assert others and all(guid >> 56 == 0x02 for guid in others)


def test_two_partitions_with_one_key_are_refused(tmp_path: Path) -> None:
    debug = "  partitions:\n    - {name: debug, node_groups: [compute]}\n"
    text = re.sub(r"  partitions:\n", debug, SEED.read_text(), count=1)
    text = text.replace("{gpu-training: 0x0002}", "{gpu-training: 0x0002, debug: 2}")
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    with pytest.raises(PipelineError) as info:
        build(spec, emit=False)
    found = [d for d in info.value.diagnostics if d.code == "FABRIC-PKEY"]
    assert found and found[0].path[-1] == "debug" and "0x0002" in found[0].message


def test_verify_cli_on_the_planned_file_and_on_a_broken_one(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from cluster_iac.cli.main import main

    plan = example_build("mixed-a100-h100").plan
    planned = tmp_path / "planned.txt"
    planned.write_text(render(plan)["opensm/compute/topology.ibnetdiscover"])
    spec = str(ROOT / "examples" / "mixed-a100-h100.yaml")
    result = CliRunner().invoke(main, ["fabric", "verify", spec, str(planned)])
    assert result.exit_code == 0 and "the compute fabric matches the plan" in result.output
    broken = tmp_path / "broken.txt"
    broken.write_text(planned.read_text() + "not a record\n")
    result = CliRunner().invoke(main, ["fabric", "verify", spec, str(broken)])
    lines = planned.read_text().count("\n") + 1
    assert result.exit_code == 1
    assert f"broken.txt:{lines}: error[FABRIC-DISCOVERY] not a line of" in result.output


def test_partitions_list_each_hosts_adapters_in_plan_order() -> None:
    """A partition of hosts with eight adapters each (the benchmark's DGX H100s): its
    members' placeholder port GUIDs in plan order, host by host and ib0..ib7, whatever the
    hash seed (before, a set's order put a host's adapters in an order that followed it)."""
    from cluster_iac.compile import compile_plan
    from cluster_iac.emit.subnet_manager import partition_members
    from cluster_iac.load.loader import load_spec_text
    from cluster_iac.spec.parse import parse_spec
    from tests.benchmarks.bench_scale import spec_yaml

    keys = 'leaf_switch: q3400, subnet_manager: {partition_keys: {batch: 16}},'
    text = spec_yaml(256).replace("leaf_switch: q3400,", keys)
    plan = compile_plan(parse_spec(load_spec_text(text)[0]))
    members = partition_members(plan, "compute")
    assert len(members) == 256 and members[:2] == ["g00001 ib0", "g00001 ib1"]
    want = [f"0x{placeholder_guid(name, CA_GUID_BASE) + 1:016x}" for name in members]
    conf = render(plan)["opensm/compute/partitions.conf"]
    assert re.findall(r"0x[0-9a-f]{16}", conf.split("batch=0x0010", 1)[1]) == want


@pytest.mark.parametrize("held", [{}, {("compute01", "ib0"): 0x0002_C903_00AB_0021}])
def test_partitions_and_topology_share_one_hashing_of_the_adapters(held: dict) -> None:
    """partitions.conf's placeholders are looked up in the fabric's adapters as the topology
    hashed them (fabric_adapters): each member's port GUID there is its adapter's in the
    topology, the same as hashed on its own, with the lock holding none or some GUIDs."""
    from dataclasses import replace

    from cluster_iac.emit.subnet_manager import _header, partition_members
    from cluster_iac.emit.subnet_manager import placeholder_guids as member_guids
    from cluster_iac.emit.subnet_topology import fabric_adapters, topology_chunks
    from cluster_iac.plan.facts import Facts

    plan = replace(example_build("seed-64gpu-h100").plan, facts=Facts({}, held))
    members = partition_members(plan, "compute")
    adapters = fabric_adapters(plan, "compute")
    assert members and set(members) < set(adapters[0])
    shared = member_guids(plan, "compute", members, adapters)
    assert shared == member_guids(plan, "compute", members)
    header = _header(plan, "compute")
    text = "".join(topology_chunks(plan, "compute", header, None, adapters))
    assert text == "".join(topology_chunks(plan, "compute", header))
    top = parse(text)
    ports = {node.description: top.port_guids[IbEnd(node.node_id, 1)]
             for node in top.nodes.values() if node.kind == "Ca"}
    accepted = {f"{host} {port}" for host, port in held}  # the topology writes those
    assert {m: ports[m] for m in shared if m not in accepted} == {
        m: guid for m, guid in shared.items() if m not in accepted}
    conf = render(plan)["opensm/compute/partitions.conf"]
    assert all(f"0x{guid:016x}" in conf for guid in shared.values())


def test_the_locks_guids_paired_from_columns_are_those_split_from_names() -> None:
    """With the lock holding every adapter's port GUID (after reconcile --accept), the keys
    paired from the link columns (member_ends; the topology's host and port columns) find
    what splitting the 'host port' names finds: partitions.conf lists the delivered GUIDs,
    and the topology writes them."""
    from dataclasses import replace

    from cluster_iac.emit.subnet_manager import (
        locked_port_guids,
        member_ends,
        partition_members,
    )
    from cluster_iac.plan.facts import Facts
    from cluster_iac.plan.subnet import adapter_guids, fabric_rows

    plan = example_build("seed-64gpu-h100").plan
    hosts = fabric_rows(plan, "compute")[0]
    devices = [plan.links.a_device[i] for i in hosts]
    ports = [plan.links.a_port[i] for i in hosts]
    held = {end: 0x0002_C903_0000_0001 + 2 * k
            for k, end in enumerate(zip(devices, ports, strict=True))}
    plan = replace(plan, facts=Facts({}, held))
    ends = member_ends(plan, "compute")
    members = partition_members(plan, "compute", ends)
    real = locked_port_guids(plan, "compute", members, ends)
    assert real is not None and len(real) == len(members) > 0
    assert real == locked_port_guids(plan, "compute")  # the names split
    assert real == {f"{d} {p}": held[(d, p)] for d, p in zip(*ends, strict=True)}
    names = [f"{d} {p}" for d, p in zip(devices, ports, strict=True)]
    assert adapter_guids(plan, names, None, (devices, ports)) == adapter_guids(plan, names) == [
        held[end] - 1 for end in zip(devices, ports, strict=True)]
    files = render(plan)
    conf = files["opensm/compute/partitions.conf"]
    assert "PLACEHOLDERS" not in conf
    assert all(f"0x{guid:016x}" in conf for guid in real.values())
    top = parse(files["opensm/compute/topology.ibnetdiscover"])
    assert {top.port_guids[IbEnd(n.node_id, 1)] for n in top.nodes.values()
            if n.kind == "Ca"} == set(held.values())
