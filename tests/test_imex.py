"""Multi-node NVLink (GB200/GB300 NVL72): IMEX's nodes_config.cfg per NVLink domain and config.cfg,
slurm.conf's switch/nvidia_imex, the health check's IMEX checks, and the located errors.
tests/real/test_imex_real.py has Slurm 24.11 and 26.05 load the plugin from these files."""

from __future__ import annotations

import ipaddress
import typing
from pathlib import Path

import pytest

from cluster_iac.base.errors import CompileError
from cluster_iac.render import PipelineError, build
from tests.conftest import example_build
from tests.facility_fixtures import compile_data
from tests.slurm_fixtures import example_data, retargeted


def _codes(data: dict[str, typing.Any]) -> list[tuple[str, tuple[object, ...]]]:
    with pytest.raises(CompileError) as info:
        compile_data(data)
    return [(d.code, d.path) for d in info.value.diagnostics]


def _switch_keys(files: dict[str, str]) -> list[str]:
    return [ln for ln in files["slurm/slurm.conf"].splitlines() if ln.startswith("Switch")]


def test_each_nvlink_domain_lists_its_nodes_management_addresses() -> None:
    build_ = example_build("gb200-nvl72")
    plan, files = build_.plan, build_.files
    mgmt = plan.addresses["management"]
    cidr = ipaddress.ip_network(plan.settings.networks.management.cidr)
    racks = [d for d in plan.nvlink_domains if d.kind == "rack"]
    assert len(racks) == 4
    listed: list[str] = []
    for domain in racks:
        text = files[f"imex/{domain.name}/nodes_config.cfg"]
        lines = text.splitlines()
        # one address per line, the domain's 18 trays in node order, nothing else
        assert text.endswith("\n") and lines == [mgmt[h] for h in domain.nodes]
        assert len(lines) == 18 and len(set(lines)) == 18
        assert all(ipaddress.ip_address(a) in cidr for a in lines)
        # named after its rack, so Ansible's per-host `rack` var finds each node's file
        racks_of = {n.rack for n in plan.compute_nodes if n.hostname in set(domain.nodes)}
        assert racks_of == {domain.name}
        listed += lines
    trays = [n.hostname for n in plan.compute_nodes if n.node_type == "gb200"]
    assert sorted(listed) == sorted(mgmt[h] for h in trays)  # every tray once, in one domain
    assert not [p for p in files if p.startswith("imex/") and p.count("/") > 2]


def test_config_gives_each_setting_with_its_reason() -> None:
    text = example_build("gb200-nvl72").files["imex/config.cfg"]
    lines = text.splitlines()
    settings = [(i, ln) for i, ln in enumerate(lines) if ln and not ln.startswith("#")]
    keys = [ln.split("=", 1)[0] for _, ln in settings]
    assert len(keys) == len(set(keys)) >= 8
    for i, _line in settings:  # a comment with the reason right above every setting
        assert lines[i - 1].startswith("# ") and len(lines[i - 1]) > 10
    values = dict(ln.split("=", 1) for _, ln in settings)
    assert values["IMEX_NODE_CONFIG_FILE"] == "/etc/nvidia-imex/nodes_config.cfg"
    assert values["SERVER_PORT"] == "50000" and values["BIND_INTERFACE_IP"] == ""
    assert "Slurm 24.05 (switch/nvidia_imex) gives each job step that spans nodes" in text


@pytest.mark.parametrize("version,per_job", [("24.05", False), ("24.11", False),
                                             ("25.05", False), ("25.11", True),
                                             ("26.05", True)])
def test_slurm_hands_out_imex_channels_from_24_05(version: str, per_job: bool) -> None:
    _plan, files = retargeted("gb200-nvl72", version)
    assert _switch_keys(files) == ["SwitchType=switch/nvidia_imex",
                                   "SwitchParameters=imex_channel_count=2048"]
    holder = "each job an IMEX" if per_job else "each job step that spans nodes"
    assert holder in files["imex/config.cfg"]


def test_no_imex_without_rack_scale_nvlink() -> None:
    files = example_build("hgx-h200").files
    assert _switch_keys(files) == [] and not [p for p in files if p.startswith("imex/")]
    assert "nvidia-imex" not in files["slurm/healthcheck/h200.sh"]


def test_health_check_verifies_the_service_and_the_channel_device() -> None:
    script = example_build("gb200-nvl72").files["slurm/healthcheck/gb200.sh"]
    assert "systemctl is-active --quiet nvidia-imex" in script
    assert "' nvidia-caps-imex-channels$' /proc/devices" in script
    assert "[ ! -s /etc/nvidia-imex/nodes_config.cfg ]" in script


@pytest.mark.parametrize("version", ["22.05", "23.02", "23.11"])
def test_an_earlier_target_is_a_located_error(version: str) -> None:
    data = example_data("gb200-nvl72", version)
    del data["slurm"]["multi_node_nvlink"]  # the fixture's opt-out: as the user writes it
    assert _codes(data) == [("SLURM-IMEX", ("cluster", "slurm_version"))]
    data["slurm"]["multi_node_nvlink"] = True  # said in the spec: the error is there
    assert _codes(data) == [("SLURM-IMEX", ("slurm", "multi_node_nvlink"))]


def test_the_error_is_printed_at_the_spec_line(tmp_path: Path) -> None:
    spec = tmp_path / "nvl72.yaml"
    text = (Path(__file__).parent.parent / "examples" / "gb200-nvl72.yaml").read_text()
    spec.write_text(text.replace('slurm_version: "24.05"', 'slurm_version: "22.05"'))
    with pytest.raises(PipelineError) as info:
        build(spec)
    from cluster_iac.cli.console import format_diagnostic

    [diag] = info.value.diagnostics
    line = text.splitlines().index('  slurm_version: "24.05"') + 1
    printed = format_diagnostic(diag, info.value.source, str(spec))
    assert printed.startswith(f"{spec}:{line}:18: error[SLURM-IMEX]")
    assert "from 24.05: Slurm 22.05 has no such plugin" in printed
    assert "slurm.multi_node_nvlink: false" in printed


def test_single_node_nvlink_jobs_need_no_imex() -> None:
    plan, files = retargeted("gb200-nvl72", "22.05")  # the fixture says multi_node_nvlink: false
    assert plan.imex is None and _switch_keys(files) == []
    assert not [p for p in files if p.startswith("imex/")]


def test_multi_node_nvlink_without_rack_domains_or_network_is_an_error() -> None:
    data = example_data("minimal")
    data["slurm"]["multi_node_nvlink"] = True
    assert _codes(data) == [("SPEC-IMEX-NO-DOMAIN", ("slurm", "multi_node_nvlink"))]
    data = example_data("gb200-nvl72")
    del data["networks"]["management"]
    assert ("SPEC-IMEX-NETWORK", ("networks",)) in _codes(data)


def test_slurm_extra_cannot_set_the_switch() -> None:
    data = example_data("gb200-nvl72")
    data["slurm"]["extra"] = {"SwitchType": "switch/none"}
    assert _codes(data) == [("SLURM-EXTRA-OWNED", ("slurm", "extra", "SwitchType"))]
