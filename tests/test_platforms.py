"""Platforms of the catalog: the H200/B200/B300/GB300 entries, a GPU override that keeps or
refuses the platform's board layout, 'did you mean' within a family, and `cluster-iac catalog`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from cluster_iac.base.suggest import closest
from cluster_iac.catalog import builtin_catalog
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.cli.main import main
from cluster_iac.render import PipelineError, build
from tests.conftest import example_build
from tests.nccl_xml import check_topology

SPEC = """\
cluster: {{name: tiny}}
node_types:
  gpu: {{platform: {platform}{gpu}}}
  head: {{platform: mgmt-1u}}
node_groups:
  - {{name: gpu, node_type: gpu, count: 2, hostname: "gpu##", racks: r01}}
  - {{name: head, role: controller, node_type: head, count: 1, hostname: "head#", racks: r01}}
rows:
  - {{name: a, racks: [{{names: r01, pdu: three-415v, max_power_kw: 40}}]}}
power:
  pdu_profiles:
    three-415v: {{layout: three, voltage_v: 415, phases: 3, breaker_a: 32}}
slurm:
  partitions:
    - {{name: gpu, node_groups: [gpu]}}
"""

NEW = ("hgx-h200-8gpu", "dgx-h200", "hgx-b200-8gpu", "dgx-b200", "dgx-b300", "gb300-nvl72-tray")


def _spec(tmp_path: Path, platform: str, gpu: str = "") -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(SPEC.format(platform=platform, gpu=f", gpu: {gpu}" if gpu else ""))
    return path


def _bom_servers(files: dict[str, str]) -> list[str]:
    return [line for line in files["report.md"].splitlines() if line.startswith("| server |")]


@pytest.mark.parametrize("key", NEW)
def test_new_platforms_resolve_and_cite(key: str) -> None:
    cat = builtin_catalog()
    platform = cat.platforms[key]
    assert platform.gpu in cat.gpus and platform.cpu in cat.cpus
    assert all(slot.model in cat.nics for slot in platform.nics)
    assert len(platform.gpu_sockets) == platform.gpu_count  # gres.conf binds every GPU
    # the GPU memory the datasheets give: 8 x 141 = 1,128 GB (H200), 8 x 180 = 1,440 GB
    # (B200), 8 x 288 = 2.3 TB (B300), 72 x 288 = 20.7 TB (GB300 NVL72)
    per_gpu = {"h200-sxm-141gb": 141, "b200-sxm-180gb": 180, "b300-sxm-288gb": 288, "gb300": 288}
    assert cat.gpus[platform.gpu].memory_gib == per_gpu[platform.gpu]
    assert "datasheet" in platform.source or "guide" in platform.source \
        or "Architecture" in platform.source


def test_h200_example_renders_topology_cores_and_bom() -> None:
    files = example_build("hgx-h200").files
    system = check_topology(files["nccl/h200.topo.xml"])  # NCCL's parser rules
    busids = [e.attrs["busid"] for e in system.find("pci") if e.attrs.get("class") == "0x030200"]
    assert len(busids) == 8
    assert "NCCL_TOPO_FILE=" in files["nccl/h200.env"]
    gres = [line for line in files["slurm/gres.conf"].splitlines()
            if line.startswith("NodeName=h200-[")]  # the servers without MIG
    assert gres == [
        "NodeName=h200-[01-04] Name=gpu Type=h200 File=/dev/nvidia[0-3] Cores=0-55",
        "NodeName=h200-[01-04] Name=gpu Type=h200 File=/dev/nvidia[4-7] Cores=56-111"]
    assert _bom_servers(files)[0].startswith("| server | HGX H200 8-GPU server")


def test_h200_override_of_an_h100_platform_is_the_h200_platform(tmp_path: Path) -> None:
    """HGX H200 boards fit HGX H100 servers: the override keeps the layout and binding, and
    the bill of materials names the H200 server, byte for byte the H200 platform's files
    (bar the topology file's note of which catalog layout it came from)."""
    over = build(_spec(tmp_path, "hgx-h100-8gpu", "{model: h200-sxm-141gb}")).files
    (tmp_path / "b").mkdir()
    own = build(_spec(tmp_path / "b", "hgx-h200-8gpu")).files
    assert "nccl/gpu.topo.xml" in over and "Cores=0-55" in over["slurm/gres.conf"]
    assert over["slurm/gres.conf"] == own["slurm/gres.conf"]
    assert over["nccl/gpu.topo.xml"].splitlines()[1:] == own["nccl/gpu.topo.xml"].splitlines()[1:]
    assert _bom_servers(over)[0] == _bom_servers(own)[0]
    assert "HGX H200 8-GPU server" in _bom_servers(over)[0]


@pytest.mark.parametrize("platform,gpu,field,words", [
    ("hgx-h100-8gpu", "{model: b200-sxm-180gb}", "model",
     "use platform 'dgx-b200' or 'hgx-b200-8gpu'"),
    # the HGX B300 board carries its own ConnectX-8s: not the B200 board
    ("hgx-b200-8gpu", "{model: b300-sxm-288gb}", "model", "use platform 'dgx-b300'"),
    ("hgx-h100-8gpu", "{count: 4}", "count", "add a catalog platform with gpu_count: 4"),
])
def test_an_override_that_loses_the_layout_is_a_located_error(
        tmp_path: Path, platform: str, gpu: str, field: str, words: str) -> None:
    spec = _spec(tmp_path, platform, gpu)
    with pytest.raises(PipelineError) as info:
        build(spec)
    [diag] = info.value.diagnostics
    assert diag.code == "SPEC-GPU-OVERRIDE" and diag.path[-1] == field
    printed = format_diagnostic(diag, info.value.source, "c.yaml").splitlines()
    col = spec.read_text().splitlines()[2].index(f"{field}: ") + len(field) + 3  # the value
    assert printed[0].startswith(f"{spec}:3:{col}: error[SPEC-GPU-OVERRIDE]")
    assert "cannot be derived" in printed[0] and words in printed[-1]


@pytest.mark.parametrize("typo,section,expected", [
    ("hgx-h200", "platforms", "dgx-h200"),        # an H200 platform, not hgx-h100-8gpu
    ("h200-8gpu", "platforms", "hgx-h200-8gpu"),
    ("hgx-b300", "platforms", "dgx-b300"),
    ("gb300-nvl72", "platforms", "gb300-nvl72-tray"),
    ("h200", "gpus", "h200-sxm-141gb"),
    ("dgx-h10", "platforms", "dgx-h100"),          # no model token: the plain nearest
])
def test_did_you_mean_prefers_the_same_family(typo: str, section: str, expected: str) -> None:
    assert closest(typo, getattr(builtin_catalog(), section)) == expected


def test_catalog_command_lists_by_kind_and_filter() -> None:
    result = CliRunner().invoke(main, ["catalog", "platforms", "h200"])
    assert result.exit_code == 0
    keys = [line.split()[0] for line in result.output.splitlines() if line.startswith("  ")
            and not line.startswith("      ")]
    assert keys == ["dgx-h200", "hgx-h200-8gpu"]
    assert "10200 W" in result.output and "source: NVIDIA DGX H100/H200 user guide" in result.output
    switches = CliRunner().invoke(main, ["catalog", "switch"]).output  # singular works too
    assert "qm9700" in switches and "64 x 400 Gb/s" in switches and "source:" in switches


def test_catalog_command_errors() -> None:
    wrong = CliRunner().invoke(main, ["catalog", "platfrom"])
    assert wrong.exit_code == 2 and "did you mean 'platforms'?" in wrong.output
    none = CliRunner().invoke(main, ["catalog", "gpus", "zzz"])
    assert none.exit_code == 1 and "no gpus entry matches 'zzz'" in none.output


def test_an_override_without_a_catalog_platform_says_the_gpus(tmp_path: Path) -> None:
    """A GPU of the same baseboard that no catalog platform is built with: the bill of
    materials names the server and the GPUs put in."""
    spec = _spec(tmp_path, "hgx-h100-8gpu", "{model: h100-custom}")
    spec.write_text(spec.read_text() + """catalog:
  gpus:
    h100-custom: {name: Custom H100, nvml_name: NVIDIA H100 80GB HBM3, gres_type: h100c,
                  memory_gib: 80, max_power_w: 700, nvlink_gbs: 450, architecture: hopper,
                  baseboard: hgx-hopper-8gpu, source: a test}
""")
    files = build(spec).files
    assert "with 8x Custom H100" in _bom_servers(files)[0]
    assert "Type=h100c File=/dev/nvidia[0-3] Cores=0-55" in files["slurm/gres.conf"]
    assert "nccl/gpu.topo.xml" in files
