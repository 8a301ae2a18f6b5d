"""Real FRR runs the generated switch configurations (switches/<name>/frr.conf and
interfaces, emit/frr.py) of the Ethernet examples' fabrics in network namespaces: the RoCE
compute fabric of examples/spectrum-x-roce.yaml and the RoCE storage fabric of
examples/dgx-h100-superpod-4su.yaml.

One namespace per switch and per host of the first scalable units (as many as hold two
leaves: a storage unit has one), and every spine (the one spine plane those leaves are
cabled to), a veth pair per planned cable of the plan's
cable table between them; each switch's interfaces applied by ifupdown2 and its frr.conf by
FRR as generated (tests/real/netns.py adds only the sandbox's paths), each host NIC given its
planned /31 address. Then: every BGP session between two switches of the lab Established;
every host subnet of the unit reached from every leaf, over as many equal-cost next hops as
that leaf has uplinks (installed in the kernel); and a full 9000-byte frame (the host MTU,
don't-fragment) from one host to another across a spine.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

import pytest

from cluster_iac.render import build
from tests.real import netns
from tests.real.netns import Lab

pytestmark = pytest.mark.real

EXAMPLES = Path(__file__).parents[2] / "examples"
# (example, its Ethernet fabric, underlay): each example's BGP as written, and the RoCE
# example's also switched to /31 numbered
CASES = [("spectrum-x-roce", "compute", "unnumbered"), ("spectrum-x-roce", "compute", "numbered"),
         ("dgx-h100-superpod-4su", "storage", "unnumbered")]


def _sample(plan: object, fabric: str) -> tuple[list[str], list[str],
                                                list[tuple[str, str, str, str]]]:
    """The first scalable units' leaves and hosts (units taken in order until they hold two
    leaves), every spine of the fabric, and the cables among them."""
    wiring = plan.fabric_wiring[fabric]  # type: ignore[attr-defined]
    configs = {n: c for n, c in plan.switch_configs.items()  # type: ignore[attr-defined]
               if c.fabric == fabric}
    unit: set[str] = set()
    for su in sorted(set(wiring.su.values())):
        unit |= {name for name, at in wiring.su.items() if at == su}
        if sum(configs[n].role == "leaf" for n in unit if n in configs) >= 2:
            break
    switches = [n for n, c in configs.items() if c.role != "leaf" or n in unit]
    hosts = [n for n in unit if wiring.tier[n] == "node"]
    inside = set(switches) | set(hosts)
    cables = plan.cables  # type: ignore[attr-defined]
    links = [(a, a_port, b, b_port) for net, a, a_port, b, b_port in zip(
        cables.network, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
        strict=True) if net == fabric and a in inside and b in inside]
    return sorted(switches), sorted(hosts), links


def _wait_next_hops(lab: Lab, switch: str, prefix: str, want: int) -> list[tuple[str, str]]:
    """The kernel's next hops for prefix on switch, once there are ``want`` of them."""
    def probe() -> list[tuple[str, str]] | None:
        hops = netns.kernel_next_hops(lab, switch, prefix)
        return hops if len(hops) >= want else None
    found: list[tuple[str, str]] = netns.wait_for(f"{prefix} on {switch}", probe, 60)
    return found


@pytest.mark.parametrize(("example", "fabric", "bgp"), CASES)
def test_generated_frr_fabric_converges_with_ecmp_over_every_uplink(
        example: str, fabric: str, bgp: str, tmp_path: Path) -> None:
    """BGP unnumbered as the examples have it, and the RoCE example switched to /31
    numbered."""
    netns.require("ip", "zebra", "bgpd", "vtysh", "ifup", "unshare", "busybox")
    spec = EXAMPLES / f"{example}.yaml"
    lock = spec.with_suffix(".lock")
    if bgp == "numbered":
        text = spec.read_text()
        spec, lock = tmp_path / spec.name, tmp_path / "none.lock"
        spec.write_text(text.replace("{bgp: unnumbered}", "{bgp: numbered}"))
    built = build(spec, lock_file=lock)
    assert {c.bgp.unnumbered for c in built.plan.switch_configs.values()
            if c.fabric == fabric} == {bgp == "unnumbered"}
    plan, files = built.plan, built.files
    switches, hosts, links = _sample(plan, fabric)
    assert sum(plan.switch_configs[n].role == "leaf" for n in switches) >= 2
    configs = plan.switch_configs
    with Lab([*switches, *hosts]) as lab:
        netns.start_fabric(lab, links, switches, files)
        for config in (configs[n] for n in switches if configs[n].role == "leaf"):
            for port in config.host_ports:
                lab.mtu(port.peer, port.peer_port, port.mtu)
                lab.address(port.peer, port.peer_port, f"{port.peer_address}/31")
        inside = set(switches)
        for name in switches:
            sessions = [n.interface if bgp == "unnumbered" else n.address
                        for n in configs[name].bgp.neighbors if n.peer in inside]
            assert sessions
            netns.wait_bgp_established(lab, name, sessions, timeout=90)
        leaves = [configs[n] for n in switches if configs[n].role == "leaf"]
        for leaf in leaves:
            for other in leaves:
                if other is leaf:
                    continue
                for port in other.host_ports:
                    prefix = str(IPv4Network(port.address, strict=False))
                    hops = _wait_next_hops(lab, leaf.name, prefix, len(leaf.uplinks))
                    assert len(hops) == len(leaf.uplinks), (leaf.name, prefix, hops)
                    assert {dev for dev, _ in hops} == {u.name for u in leaf.uplinks}
        # gpu A's NIC on leaf 1 to gpu B's NIC on leaf 2: through a spine
        first = leaves[0].host_ports[0]
        second = next(p for p in leaves[1].host_ports if p.peer != first.peer)
        for here, there in ((first, second), (second, first)):
            lab.route(here.peer, f"{there.peer_address}/32", "via",
                      here.address.split("/")[0], "dev", here.peer_port)
        # a full frame (ICMP payload MTU - IPv4 20 - ICMP 8); the kernel sets don't-fragment
        # (PMTU discovery, net.ipv4.ip_no_pmtu_disc 0), so a hop with a smaller MTU drops it
        frame = first.mtu - 28
        netns.resolve_neighbours(lab, first.peer, first.peer_address, second.peer_address)
        ping = lab.run(first.peer, "busybox", "ping", "-c", "2", "-W", "2", "-s", str(frame),
                       "-I", first.peer_address, second.peer_address, timeout=20)
        assert " 0% packet loss" in ping.stdout, ping.stdout
