"""Issue 43's hardware half through the CLI: GPU variants on their own baseboard, MIG instance
ids as the driver assigns them, the MIG layout selected at boot, MIG with AutoDetect=nvml."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

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
