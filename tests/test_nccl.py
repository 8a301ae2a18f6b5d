"""NCCL outputs: topology XML against NCCL's parser rules and Azure's ND H100 v5 file, nccl.conf
against the variables NCCL reads, env files through a real shell, and the spec's own variables."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from cluster_iac.catalog.nccl_vars import nccl_variables, parse_version
from cluster_iac.emit import ansible
from cluster_iac.plan.nccl import TOPO_DIR
from cluster_iac.render import PipelineError, build
from tests.conftest import EXAMPLE_IDS, example_build
from tests.nccl_xml import NcclXmlError, check_topology, parse

# Vendors' published topology files and NCCL's template, copied with their provenance
# (tests/data/nccl/samples/SOURCES.md) so the tests run on any clone.
REFERENCE = Path(__file__).resolve().parent / "data" / "nccl"
SAMPLES = sorted(p for p in (REFERENCE / "samples").glob("*.xml") if "-graph" not in p.name)
AZURE_NDV5 = REFERENCE / "samples" / "Azure__azhpc-images__topology__ndv5-topo.xml"

BASE_SPEC = """\
cluster: {{name: tiny, nccl_version: "{version}"}}
node_types:
  gpu: {{platform: {platform}{nics}}}
  head: {{platform: mgmt-1u}}
node_groups:
  - {{name: gpu, node_type: gpu, count: 2, hostname: "gpu##", racks: r01}}
  - {{name: head, role: controller, node_type: head, count: 1, hostname: "head#", racks: r02}}
rows:
  - {{name: a, racks: [{{names: "r[01-02]", pdu: three-415v, max_power_kw: 45}}]}}
power:
  pdu_profiles:
    three-415v: {{layout: three, voltage_v: 415, phases: 3, breaker_a: 32}}
fabric:
  compute: {{technology: {technology}, design: rail-optimized, leaf_switch: {leaf}, racks: r02}}
networks:
  management: {{cidr: 10.0.0.0/24, interface: eno1}}
nccl: {nccl}
slurm:
  partitions:
    - {{name: gpu, node_groups: [gpu]}}
"""


def spec_build(tmp_path: Path, *, platform: str = "dgx-h100", version: str = "2.21",
               technology: str = "infiniband", nccl: str = "{}"):  # type: ignore[no-untyped-def]
    roce = technology == "roce"
    # the management network needs an in-band adapter, which the Azure VM's catalog entry
    # (compute NICs only) and a RoCE list of its own lack
    inband = "{role: inband, model: cx6lx-25gbe}"
    nics = (f", nics: [{{role: compute, model: cx7-400gbe, count: 8}}, {inband}]" if roce
            else f", nics_add: [{inband}]" if platform == "azure-nd-h100-v5" else "")
    path = tmp_path / "cluster.yaml"
    path.write_text(BASE_SPEC.format(platform=platform, version=version, technology=technology,
                                     leaf="sn5600" if roce else "qm9700", nics=nics, nccl=nccl))
    return build(path)


def nccl_files(suffix: str) -> list[tuple[str, str, str]]:
    """(example, path, text) of every emitted file ending in ``suffix``."""
    return [(name, path, text) for name in EXAMPLE_IDS
            for path, text in example_build(name).files.items()
            if path.startswith("nccl/") and path.endswith(suffix)]


TOPOLOGIES = nccl_files(".topo.xml")
CONFS = nccl_files(".nccl.conf")


def test_examples_have_topologies_and_confs() -> None:
    # four examples use platforms with catalog layouts; GB200 trays have none yet
    assert {name for name, _, _ in TOPOLOGIES} == set(EXAMPLE_IDS) - {"gb200-nvl72"}
    assert {name for name, _, _ in CONFS} == set(EXAMPLE_IDS)


@pytest.mark.parametrize("name,path,text", TOPOLOGIES, ids=[f"{n}:{p}" for n, p, _ in TOPOLOGIES])
def test_generated_topology_passes_nccl_parser_rules(name: str, path: str, text: str) -> None:
    system = check_topology(text)
    elements = text.count("<") - text.count("</") - text.count("<!--")
    assert elements <= 150  # leaves room in NCCL's 256 nodes for what detection adds
    assert "\t" not in text and "\r" not in text and text.endswith("</system>\n")
    nt = example_build(name).plan.node_types[path.split("/")[1].removesuffix(".topo.xml")]
    gpus = [p for p in system.find("pci") if p.attrs["class"].startswith("0x03")]
    assert len(gpus) == nt.gpu_count


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_checker_accepts_vendor_files(sample: Path) -> None:
    # the tokenizer rules hold for every published file; ndv5 also meets the attribute rules
    parse(sample.read_text())
    if sample == AZURE_NDV5:
        check_topology(sample.read_text())


GOOD = (REFERENCE / "nccl_topo_template_example.xml").read_text()
BROKEN = {
    "xml declaration": lambda t: '<?xml version="1.0"?>\n' + t,
    "tab before a tag": lambda t: t.replace("\n  <cpu", "\n\t<cpu", 1),
    "newline inside a tag": lambda t: t.replace(' affinity=', '\n affinity=', 1),
    "unquoted value": lambda t: t.replace('link_width="16"', "link_width=16", 1),
    "space around =": lambda t: t.replace('numaid="0"', 'numaid = "0"', 1),
    "mismatched close": lambda t: t.replace("</cpu>", "</pci>", 1),
    "comment without a blank": lambda t: "<!--a=b -->\n" + t,
    "upper-case busid": lambda t: t.replace("0000:2a:00.0", "0000:2A:00.0", 1),
    "range-list affinity": lambda t: t.replace("00000000,0000ffff,ffffffff", "0-47", 1),
    "unknown link speed": lambda t: t.replace('"32.0 GT/s PCIe"', '"32 GT/s PCIe/s"', 1),
    "missing class": lambda t: t.replace(' class="0x030200"', "", 1),
    "wrong version": lambda t: t.replace('version="1"', 'version="2"', 1),
    "too many elements": lambda t: t.replace(
        "  </cpu>", "".join(f'    <pci busid="0000:{i:02x}:00.0" class="0x030200" link_speed="32.0'
                           f' GT/s PCIe" link_width="16"/>\n' for i in range(256)) + "  </cpu>", 1),
}


@pytest.mark.parametrize("rule", sorted(BROKEN))
def test_checker_rejects_what_nccl_rejects(rule: str) -> None:
    check_topology(GOOD)
    broken = BROKEN[rule](GOOD)
    assert broken != GOOD
    with pytest.raises(NcclXmlError):
        check_topology(broken)


def _structure(system) -> dict:  # type: ignore[no-untyped-def]
    """numaid -> (cpu attributes, sorted switches -> sorted (busid, class, speed, width))."""
    keep = ("busid", "class", "link_speed", "link_width")
    result = {}
    for cpu in system.children:
        cpu_attrs = {k: cpu.attrs[k] for k in ("affinity", "arch", "vendor", "familyid", "modelid")}
        switches = sorted(
            (tuple(sw.attrs[k] for k in keep),
             tuple(sorted(tuple(dev.attrs[k] for k in keep) for dev in sw.children)))
            for sw in cpu.children)
        result[cpu.attrs["numaid"]] = (cpu_attrs, switches)
    return result


def test_azure_nd_h100_v5_layout_matches_azures_file(tmp_path: Path) -> None:
    built = spec_build(tmp_path, platform="azure-nd-h100-v5")
    ours = check_topology(built.files["nccl/gpu.topo.xml"])
    theirs = check_topology(AZURE_NDV5.read_text())
    assert _structure(ours) == _structure(theirs)
    assert len(ours.find("pci")) == len(theirs.find("pci")) == 24  # 8 switches, 8 GPUs, 8 NICs


def test_dgx_h100_topology_pairs_each_gpu_with_its_rail_nic() -> None:
    build_ = example_build("dgx-h100-superpod-4su")
    system = check_topology(build_.files["nccl/dgx-h100.topo.xml"])
    switches = [sw for cpu in system.children for sw in cpu.children]
    assert len(switches) == 8
    for switch in switches:  # one GPU and one InfiniBand NIC per PCIe switch
        classes = sorted(dev.attrs["class"] for dev in switch.children)
        assert classes == ["0x020700", "0x030200"]
    cpu0 = system.children[0].attrs  # 8480C: 56 cores + SMT siblings 112-167 on NUMA 0
    mask = int(cpu0["affinity"].replace(",", ""), 16)
    assert [c for c in range(224) if mask >> c & 1] == [*range(56), *range(112, 168)]


def test_seed_topology_keeps_gpus_but_not_the_replaced_nics() -> None:
    # the seed replaces the platform's 8 NDR NICs with one HDR HCA: its position is unknown
    system = check_topology(example_build("seed-64gpu-h100").files["nccl/h100-hdr.topo.xml"])
    classes = [p.attrs["class"] for p in system.find("pci")]
    assert classes.count("0x030200") == 8 and "0x020700" not in classes


@pytest.mark.parametrize("name,path,text", CONFS, ids=[f"{n}:{p}" for n, p, _ in CONFS])
def test_nccl_conf_holds_only_variables_nccl_knows(name: str, path: str, text: str) -> None:
    known = nccl_variables()
    target = parse_version(example_build(name).plan.cluster.nccl_version)
    assert "\r" not in text and (text == "" or text.endswith("\n"))
    names = []
    for line in text.splitlines():
        variable, sep, value = line.partition("=")
        assert sep and variable in known, line
        assert known[variable].status(target) is None, line
        assert value == value.strip() and value, line
        names.append(variable)
    assert names == sorted(set(names))


@pytest.mark.parametrize("name", EXAMPLE_IDS)
def test_env_file_sets_the_same_values_in_a_shell(name: str, tmp_path: Path) -> None:
    for path, text in example_build(name).files.items():
        if not path.endswith(".env") or not path.startswith("nccl/"):
            continue
        conf = example_build(name).files[path.removesuffix(".env") + ".nccl.conf"]
        env_file = tmp_path / "x.env"
        env_file.write_text(text)
        out = subprocess.run(["sh", "-c", f"set -a; . {env_file}; env"], capture_output=True,
                             text=True, check=True, env={}).stdout
        shell = dict(line.split("=", 1) for line in out.splitlines() if line.startswith("NCCL_"))
        assert shell == dict(line.split("=", 1) for line in conf.splitlines())


def test_infiniband_settings_of_the_superpod() -> None:
    env = example_build("dgx-h100-superpod-4su").plan.nccl["dgx-h100"].env()
    # the DGX H100 user guide's compute HCAs; storage ports mlx5_1/2/7/8 stay out
    assert env["NCCL_IB_HCA"] == "=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_9,mlx5_10,mlx5_11"
    assert env["NCCL_SOCKET_IFNAME"] == "=enp170s0f0"
    assert env["NCCL_TOPO_FILE"] == "/etc/nccl/dgx-h100.topo.xml"
    assert "NCCL_IB_GID_INDEX" not in env  # ignored on an IB link layer since 2.21


def test_roce_sets_traffic_class_and_gid_only_for_old_nccl(tmp_path: Path) -> None:
    new = spec_build(tmp_path, technology="roce").plan.nccl["gpu"].env()
    assert new["NCCL_IB_TC"] == "106" and "NCCL_IB_GID_INDEX" not in new
    # 105 is DSCP 26 with ECT(1): the fabric's class, other ECN bits
    old = spec_build(tmp_path, technology="roce", version="2.18",
                     nccl="{traffic_class: 105}").plan.nccl["gpu"].env()
    assert old["NCCL_IB_TC"] == "105" and old["NCCL_IB_GID_INDEX"] == "3"


def test_spec_variables_override_and_extend(tmp_path: Path) -> None:
    nccl = "{env: {NCCL_IB_QPS_PER_CONNECTION: 2}, node_types: {gpu: {NCCL_SOCKET_IFNAME: '=ib0'}}}"
    built = spec_build(tmp_path, nccl=nccl)
    conf = built.files["nccl/gpu.nccl.conf"].splitlines()
    assert "NCCL_IB_QPS_PER_CONNECTION=2" in conf and "NCCL_SOCKET_IFNAME==ib0" in conf


@pytest.mark.parametrize("nccl,version,code", [
    ("{env: {NCCL_IB_HCAS: x}}", "2.21", "NCCL-UNKNOWN-VAR"),
    ("{env: {NCCL_MAX_NCHANNELS: 8}}", "2.21", "NCCL-DEPRECATED-VAR"),
    ("{env: {NCCL_MNNVL_ENABLE: 1}}", "2.20", "NCCL-TOO-NEW-VAR"),
    ("{env: {NCCL_WORK_FIFO_DEPTH: 1}}", "2.22", "NCCL-REMOVED-VAR"),
    ("{env: {NCCL_DEBUG: ' INFO'}}", "2.21", "NCCL-VALUE"),
    ("{node_types: {gpus: {NCCL_DEBUG: WARN}}}", "2.21", "NCCL-NODE-TYPE"),
])
def test_spec_variables_are_checked(tmp_path: Path, nccl: str, version: str, code: str) -> None:
    with pytest.raises(PipelineError) as caught:
        spec_build(tmp_path, nccl=nccl, version=version)
    assert [d.code for d in caught.value.diagnostics] == [code]
    assert caught.value.diagnostics[0].path[0] == "nccl"


def test_deprecated_variable_is_fine_for_an_old_nccl(tmp_path: Path) -> None:
    built = spec_build(tmp_path, nccl="{env: {NCCL_MAX_NCHANNELS: 8}}", version="2.16")
    assert "NCCL_MAX_NCHANNELS=8" in built.files["nccl/gpu.nccl.conf"].splitlines()


def test_topology_paths_agree_with_the_ansible_inventory() -> None:
    assert TOPO_DIR == ansible.NCCL_TOPO_DIR
    built = example_build("mixed-a100-h100")
    for name, env in built.plan.nccl.items():
        assert env.topo_file == f"{ansible.NCCL_TOPO_DIR}/{name}.topo.xml"
        assert f"nccl/{name}.topo.xml" in built.files


def test_catalog_layouts_agree_with_their_platforms() -> None:
    from cluster_iac.catalog import builtin_catalog

    for key, platform in builtin_catalog().platforms.items():
        if platform.pcie is None:
            continue
        layout = platform.pcie
        gpus = {dev.index: numa.numaid for numa in layout.numa_nodes
                for sw in numa.switches for dev in sw.devices if dev.kind == "gpu"}
        nics = [dev for numa in layout.numa_nodes for sw in numa.switches
                for dev in sw.devices if dev.kind == "nic"]
        assert sorted(gpus) == list(range(platform.gpu_count)), key
        # gres.conf's socket of each GPU is the socket of its NUMA node
        assert [gpus[i] // layout.numa_per_socket for i in range(platform.gpu_count)] == \
            platform.gpu_sockets, key
        compute = sum(slot.count for slot in platform.nics if slot.role == "compute")
        assert sorted(dev.index for dev in nics) == list(range(compute)), key
        assert all(dev.busid.endswith(".0") for dev in nics), key  # NCCL looks NICs up at .0


def test_a_layout_that_misplaces_gpus_is_rejected(tmp_path: Path) -> None:
    spec = BASE_SPEC.format(platform="my-box", version="2.21", technology="infiniband",
                            leaf="qm9700", nics="", nccl="{}")
    spec += """catalog:
  platforms:
    my-box:
      name: Box
      gpu: h100-sxm5-80gb
      gpu_count: 2
      cpu: xeon-8480c
      memory_gib: 512
      nics: [{role: compute, model: cx7-ndr, count: 1}, {role: inband, model: cx6lx-25gbe}]
      max_power_w: 3000
      pcie:
        numa_nodes:
          - numaid: 2
            switches:
              - devices: [{kind: gpu, index: 0, busid: "0000:1b:00.0"}]
        source: test
      source: test
"""
    path = tmp_path / "cluster.yaml"
    path.write_text(spec)
    with pytest.raises(PipelineError) as caught:
        build(path)
    found = [d for d in caught.value.diagnostics if d.code == "NCCL-LAYOUT"]
    assert len(found) == 2  # GPU 1 missing; NUMA node 2 of 2 sockets x 1
    assert found[0].path == ("catalog", "platforms", "my-box", "pcie")
    location = caught.value.source.locate(found[0].path, key=True)
    assert location.line == spec.splitlines().index("      pcie:") + 1
