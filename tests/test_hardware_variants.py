"""Issue 43's hardware half through the CLI: GPU variants on their own baseboard, MIG instance
ids as the driver assigns them, the MIG layout selected at boot, MIG with AutoDetect=nvml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from cluster_iac.catalog import builtin_catalog
from cluster_iac.cli.main import main

SPEC = """\
cluster: {{name: tiny}}
node_types:
  gpu: {{platform: {platform}{extra}}}
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


def spec(tmp_path: Path, platform: str, extra: str = "") -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(SPEC.format(platform=platform, extra=extra))
    return path


def render(path: Path, out: Path) -> tuple[int, str, dict[str, str]]:
    """Exit code, output and the rendered files of `cluster-iac render`."""
    result = CliRunner().invoke(main, ["render", str(path), "-o", str(out)])
    files = ({str(f.relative_to(out)): f.read_text() for f in out.rglob("*") if f.is_file()}
             if result.exit_code == 0 else {})
    return result.exit_code, result.output, files


def test_seven_1g_on_an_h100_are_instances_7_to_13(tmp_path: Path) -> None:
    """`nvidia-smi mig -lgi` on an H100 80GB with 7 x 1g.10gb lists GPU instances 7-13
    (tests/test_mig.py H100_7X1G): gres.conf's capability devices and the health check's
    expected instances are those ids, so the check does not drain a healthy node."""
    layout = ", mig: [{profiles: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, " \
             "1g.10gb]}]"
    code, output, files = render(spec(tmp_path, "hgx-h100-8gpu", layout), tmp_path / "out")
    assert code == 0, output
    check = files["slurm/healthcheck/gpu.sh"]
    expected = next(ln for ln in check.splitlines() if ln.startswith("mig_expected="))
    gpu0 = sorted(int(item.split(":")[1]) for item in expected.strip("'").split("=", 1)[1]
                  .strip("'").split() if item.startswith("0:"))
    assert gpu0 == list(range(7, 14))
    gres = [ln for ln in files["slurm/gres.conf"].splitlines()
            if "MultipleFiles=/dev/nvidia0," in ln]
    # /proc/driver/nvidia-caps/mig-minors: gpu0/gi7/access is 3 + 9 x 7 = 66, gi13's 120
    caps = sorted(int(re.findall(r"nvidia-cap(\d+)", ln)[0]) for ln in gres)
    assert caps == [3 + 9 * gi for gi in range(7, 14)]


@pytest.mark.parametrize("platform,gpu", [
    ("dgx-a100", "a100-sxm4-40gb"),       # DGX A100 320GB
    ("dgx-a100", "a800-sxm4-80gb"),
    ("hgx-h100-8gpu", "h800-sxm5-80gb"),
    ("dgx-h100", "h20-96gb"),
    ("hgx-h200-8gpu", "h20-96gb"),         # any GPU of the board's family, not only its own
])
def test_a_variant_on_its_own_baseboard_keeps_the_layout(
        tmp_path: Path, platform: str, gpu: str) -> None:
    """A GPU of the platform's baseboard family is accepted with the platform's PCIe layout
    (nccl/<type>.topo.xml) and socket binding (gres.conf Cores=), under its own GRES type."""
    code, output, files = render(spec(tmp_path, platform, f", gpu: {{model: {gpu}}}"),
                                 tmp_path / "out")
    assert code == 0, output
    cat = builtin_catalog()
    assert "nccl/gpu.topo.xml" in files
    gres = [ln for ln in files["slurm/gres.conf"].splitlines() if ln.startswith("NodeName=gpu")]
    assert gres and all(f"Type={cat.gpus[gpu].gres_type} " in ln and " Cores=" in ln
                        for ln in gres)
    assert f"Gres=gpu:{cat.gpus[gpu].gres_type}:8" in files["slurm/slurm.conf"]


@pytest.mark.parametrize("platform,gpu,names", [
    ("dgx-a100", "h20-96gb", "'dgx-h100' or 'dgx-h200' or 'hgx-h100-8gpu'"),
    ("hgx-h100-8gpu", "a100-sxm4-40gb", "use platform 'dgx-a100'"),
    ("hgx-h100-8gpu", "h100-pcie-80gb", "add a catalog platform with gpu: h100-pcie-80gb"),
])
def test_a_variant_of_another_baseboard_is_refused_at_the_override(
        tmp_path: Path, platform: str, gpu: str, names: str) -> None:
    """Across baseboard families: SPEC-GPU-OVERRIDE at the model, the hint naming the
    platforms of the GPU's own board; following the hint renders."""
    path = spec(tmp_path, platform, f", gpu: {{model: {gpu}}}")
    code, output, _ = render(path, tmp_path / "out")
    assert code == 1
    first = output.splitlines()[0]
    col = path.read_text().splitlines()[2].index("model: ") + len("model: ") + 1
    assert first.startswith(f"{path}:3:{col}: error[SPEC-GPU-OVERRIDE]")
    hint = next(ln for ln in output.splitlines() if "hint:" in ln)
    assert names in hint
    if "use platform" in hint:  # follow it: the first platform named, the same override
        fixed = hint.split("use platform '", 1)[1].split("'", 1)[0]
        code, output, files = render(spec(tmp_path, fixed, f", gpu: {{model: {gpu}}}"),
                                     tmp_path / "fixed")
        assert code == 0, output
        assert "nccl/gpu.topo.xml" in files and "Cores=" in files["slurm/gres.conf"]


@pytest.mark.parametrize("version,holder", [
    ("25.05", "each job step that spans nodes"),
    ("25.11", "each job an IMEX channel"),   # slurm.conf(5) of 25.11: one channel per job
    ("26.05", "each job an IMEX channel"),
])
def test_imex_text_follows_the_release(tmp_path: Path, version: str, holder: str) -> None:
    text = (Path(__file__).parent.parent / "examples" / "gb200-nvl72.yaml").read_text()
    path = tmp_path / "gb200.yaml"
    path.write_text(re.sub(r'slurm_version: "[0-9.]+"', f'slurm_version: "{version}"', text))
    code, output, files = render(path, tmp_path / "out")
    assert code == 0, output
    assert f"Slurm {version} (switch/nvidia_imex) gives {holder}" in files["imex/config.cfg"]
    conf = files["slurm/slurm.conf"].splitlines()
    assert "SwitchType=switch/nvidia_imex" in conf
    assert "SwitchParameters=imex_channel_count=2048" in conf


def test_the_mig_layout_is_selected_at_boot(tmp_path: Path) -> None:
    """nvidia-mig-manager.service applies MIG_PARTED_SELECTED_CONFIG of MIG_PARTED_CONFIG_FILE
    at boot (NVIDIA/mig-parted deployments/systemd service.sh), and regenerates its own
    config.yaml each boot: the playbook installs the layout as a file of its own and the
    drop-in that selects it, replacing the package's 'all-disabled' override.conf."""
    layout = ", mig: [{profiles: [3g.40gb, 2g.20gb, 1g.10gb, 1g.10gb]}]"
    code, output, files = render(spec(tmp_path, "hgx-h100-8gpu", layout), tmp_path / "out")
    assert code == 0, output
    drop_in = files["mig/gpu.override.conf"].splitlines()
    assert drop_in[-3:] == [
        "[Service]",
        'Environment="MIG_PARTED_CONFIG_FILE=/etc/nvidia-mig-manager/cluster-iac.yaml"',
        'Environment="MIG_PARTED_SELECTED_CONFIG=gpu"']
    layouts = YAML(typ="safe", pure=True).load(files["mig/gpu.yaml"])["mig-configs"]
    assert list(layouts) == ["gpu"]  # the name the drop-in selects
    site = YAML(typ="safe", pure=True).load(files["ansible/site.yml"])
    play = next(p for p in site if p["hosts"] == "type_gpu")
    items = [i for t in play["tasks"] if t["name"] == "the files" for i in t["loop"]]
    dests = {i["src"]: i["dest"] for i in items}
    assert dests["mig/gpu.yaml"] == "/etc/nvidia-mig-manager/cluster-iac.yaml"
    assert dests["mig/gpu.override.conf"] == (
        "/etc/systemd/system/nvidia-mig-manager.service.d/override.conf")


def _gb200(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = (Path(__file__).parent.parent / "examples" / "gb200-nvl72.yaml").read_text()
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    (tmp_path / name).mkdir()
    path = tmp_path / name / "gb200.yaml"
    path.write_text(text)
    return path


OFF_LOOP = ('- {name: cdu-b, racks: "nvl[3-4]"', '- {name: cdu-b, racks: "nvl3"')


def test_a_liquid_rack_on_no_loop_is_an_error_at_the_rack(tmp_path: Path) -> None:
    """With loops declared, rack nvl4 on none of them fails although its group declares
    liquid_capacity_kw (the manifold's rating); following either half of the hint renders."""
    path = _gb200(tmp_path, "off", OFF_LOOP)
    code, output, _ = render(path, tmp_path / "off" / "out")
    assert code == 1
    line = next(i for i, ln in enumerate(path.read_text().splitlines(), 1)
                if 'names: "nvl[1-4]"' in ln)
    first = next(ln for ln in output.splitlines() if "COOLING-RACK-NO-LOOP" in ln)
    assert first.startswith(f"{path}:{line}:") and "error[COOLING-RACK-NO-LOOP]" in first
    assert "rack nvl4" in first and "liquid_capacity_kw (140 kW)" in first
    hint = next(ln for ln in output.splitlines() if "hint:" in ln and "in_rack_cdu" in ln)
    assert "cooling.loops[].racks" in hint
    # the hint's first half: the rack on its loop again
    code, output, _ = render(_gb200(tmp_path, "looped"), tmp_path / "looped" / "out")
    assert code == 0, output
    # its second half: the racks carry their own CDU
    code, output, _ = render(_gb200(tmp_path, "own-cdu", OFF_LOOP, (
        "liquid_capacity_kw: 140, pdu: nvl72-ab}",
        "liquid_capacity_kw: 140, in_rack_cdu: true, pdu: nvl72-ab}")),
        tmp_path / "own-cdu" / "out")
    assert code == 0, output
    assert "COOLING-RACK-NO-LOOP" not in output


MIG_AUTODETECT = ", gres_autodetect: nvml, mig: [{profiles: [3g.40gb, 2g.20gb, 1g.10gb, " \
                 "1g.10gb]}]"


@pytest.mark.parametrize("platform,types", [
    ("hgx-h100-8gpu", "gpu:h100_80gb_hbm3_1g.10gb:16,gpu:h100_80gb_hbm3_2g.20gb:8,"
                      "gpu:h100_80gb_hbm3_3g.40gb:8"),
    # "NVIDIA A100-SXM4-80GB": slurmd cuts the name at its first '-' before the profile
    ("dgx-a100", "gpu:a100_1g.10gb:16,gpu:a100_2g.20gb:8,gpu:a100_3g.40gb:8"),
])
def test_mig_with_nvml_autodetect_as_slurm_documents_it(
        tmp_path: Path, platform: str, types: str) -> None:
    """gres.conf AutoDetect=nvml, slurm.conf Gres= of the MIG types slurmd derives from NVML
    (gres.html "MIG Management"; gpu_nvml.c _handle_mig of 24.11 and 26.05)."""
    path = spec(tmp_path, platform, MIG_AUTODETECT)
    path.write_text(path.read_text().replace("cluster: {name: tiny}",
                                             'cluster: {name: tiny, slurm_version: "24.11"}'))
    code, output, files = render(path, tmp_path / "out")
    assert code == 0, output
    gres = [ln for ln in files["slurm/gres.conf"].splitlines() if ln.startswith("NodeName=gpu")]
    assert gres == ["NodeName=gpu[01-02] AutoDetect=nvml"]
    node = next(ln for ln in files["slurm/slurm.conf"].splitlines()
                if ln.startswith("NodeName=gpu[01-02] "))
    assert f"Gres={types} " in node


def test_mig_autodetect_on_22_05_is_refused_and_the_hint_works(tmp_path: Path) -> None:
    path = spec(tmp_path, "hgx-h100-8gpu", MIG_AUTODETECT)
    code, output, _ = render(path, tmp_path / "out")   # the spec's default release, 22.05
    assert code == 1
    first = output.splitlines()[0]
    col = path.read_text().splitlines()[2].index("gres_autodetect: ") + len("gres_autodetect: ")
    assert first.startswith(f"{path}:3:{col + 1}: error[SPEC-MIG-AUTODETECT]")
    assert "cluster.slurm_version to 23.11 or later" in output
    path.write_text(path.read_text().replace("cluster: {name: tiny}",
                                             'cluster: {name: tiny, slurm_version: "23.11"}'))
    code, output, _ = render(path, tmp_path / "fixed")
    assert code == 0, output
