"""Real FRR runs a 3-tier Ethernet fabric's generated configurations (leaves, pods of spines,
super-spines) in network namespaces: examples/spectrum-x-roce.yaml with ``tiers: 3``, whose two
scalable units become two pods of two spines each under two super-spines (RFC 7938's 5-stage
Clos: one ASN per leaf, per pod's spines, for the super-spines).

The sample, as tests/real/test_opensm_scale.py samples a large InfiniBand fabric: one
super-spine plane (the first super-spine and the spine of each pod cabled to it), the other
spine of each pod, the first two leaves of each of the two pods, and the hosts on those
leaves; a veth pair per planned cable among them; each switch's interfaces by ifupdown2 and
its frr.conf by FRR as generated. Then:

- every BGP session between two switches of the sample Established;
- a leaf reaches the host subnets of a leaf of its own pod over every one of its uplinks (the
  design's leaf ECMP), and of a leaf of the other pod over exactly its uplinks to the plane's
  spine (the spines of the other planes are cut off from the other pod in the sample);
- the plane's spine reaches the other pod's host subnets over every one of its uplinks to the
  super-spine (the design's spine ECMP: all of them go to that plane), and the super-spine
  reaches each pod's over every cable to that pod's spine.

Bounded: 9 FRR instances; the whole test runs in well under 90 s here.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from pathlib import Path

import pytest

from cluster_iac.plan.switching import SwitchConfig
from cluster_iac.render import build
from tests.real import netns
from tests.real.netns import Lab

pytestmark = pytest.mark.real

EXAMPLE = Path(__file__).parents[2] / "examples" / "spectrum-x-roce.yaml"
LEAVES_PER_POD = 2
CHECKED_PREFIXES = 2  # host /31s checked per far leaf (every one is announced alike)


def _prefixes(leaf: SwitchConfig) -> list[str]:
    return [str(IPv4Network(p.address, strict=False))
            for p in leaf.host_ports[:CHECKED_PREFIXES]]


def _sample(configs: dict[str, SwitchConfig]) -> tuple[SwitchConfig, list[list[SwitchConfig]],
                                                        list[list[SwitchConfig]]]:
    """The plane's super-spine, each pod's spines (the plane's first) and each pod's leaves."""
    core = min((c for c in configs.values() if c.role == "super-spine"), key=lambda c: c.name)
    plane = sorted({p.peer for p in core.interfaces if p.kind == "fabric"})
    spines, leaves = [], []
    for spine in plane:
        below = {p.peer for p in configs[spine].interfaces if p.kind == "fabric"}
        pod = [c for c in configs.values() if c.role == "spine"
               and {p.peer for p in c.interfaces if p.kind == "fabric"} == below]
        spines.append(sorted(pod, key=lambda c: (c.name != spine, c.name)))
        leaves.append([configs[n] for n in sorted(below)][:LEAVES_PER_POD])
    assert len(spines) == 2 and all(len(s) >= 2 for s in spines), spines
    return core, spines, leaves


def _wait_hops(lab: Lab, switch: str, prefix: str, want: int) -> set[str]:
    """The kernel's next-hop devices for prefix on switch, once there are ``want``."""
    def probe() -> list[tuple[str, str]] | None:
        hops = netns.kernel_next_hops(lab, switch, prefix)
        return hops if len(hops) >= want else None
    hops: list[tuple[str, str]] = netns.wait_for(f"{prefix} on {switch}", probe, 60)
    assert len(hops) == want, (switch, prefix, hops)
    return {dev for dev, _ in hops}


def test_a_three_tier_fabric_converges_with_the_designs_ecmp(tmp_path: Path) -> None:
    netns.require("ip", "zebra", "bgpd", "vtysh", "ifup", "unshare")
    spec = tmp_path / EXAMPLE.name
    spec.write_text(EXAMPLE.read_text().replace(
        "    underlay: {bgp: unnumbered}\n", "    underlay: {bgp: unnumbered}\n    tiers: 3\n"))
    built = build(spec, lock_file=tmp_path / "none.lock")
    configs = built.plan.switch_configs
    core, spines, leaves = _sample(configs)
    switches = [core, *(s for pod in spines for s in pod), *(f for pod in leaves for f in pod)]
    names = {c.name for c in switches}
    hosts = sorted({p.peer for pod in leaves for leaf in pod for p in leaf.host_ports})
    inside = names | set(hosts)
    cables = built.plan.cables
    links = [(a, ap, b, bp) for net, a, ap, b, bp in zip(
        cables.network, cables.a_device, cables.a_port, cables.b_device, cables.b_port,
        strict=True) if net == "compute" and a in inside and b in inside]
    with Lab([*sorted(names), *hosts]) as lab:
        for a, a_port, b, b_port in links:
            lab.link((a, a_port), (b, b_port))
        for config in switches:
            netns.forwarding(lab, config.name)
            netns.ifupdown2(lab, config.name, built.files[f"switches/{config.name}/interfaces"],
                            timeout=60)
        for config in switches:
            netns.start_frr(lab, config.name, built.files[f"switches/{config.name}/frr.conf"],
                            timeout=60)
        for leaf in (f for pod in leaves for f in pod):
            for port in leaf.host_ports:
                lab.mtu(port.peer, port.peer_port, port.mtu)
                lab.address(port.peer, port.peer_port, f"{port.peer_address}/31")
        for config in switches:
            sessions = [n.interface for n in config.routing.neighbors if n.peer in names]
            assert sessions, config.name
            netns.wait_bgp_established(lab, config.name, sessions, timeout=90)
        plane_spines = {pod[0].name for pod in spines}
        for here, pod in enumerate(leaves):
            far = leaves[1 - here]
            for leaf in pod:
                uplinks = {u.name for u in leaf.uplinks}
                to_plane = {u.name for u in leaf.uplinks if u.peer in plane_spines}
                assert uplinks and to_plane < uplinks  # the other plane's links cut off
                for other in (f for f in pod if f is not leaf):
                    for prefix in _prefixes(other):
                        assert _wait_hops(lab, leaf.name, prefix, len(uplinks)) == uplinks
                for other in far:
                    for prefix in _prefixes(other):
                        assert _wait_hops(lab, leaf.name, prefix, len(to_plane)) == to_plane
            spine = spines[here][0]
            assert {u.peer for u in spine.uplinks} == {core.name}
            assert spine.routing.maximum_paths >= len(spine.uplinks)
            for other in far:
                for prefix in _prefixes(other):
                    assert _wait_hops(lab, spine.name, prefix, len(spine.uplinks)) == {
                        u.name for u in spine.uplinks}
            down = {p.name for p in core.interfaces if p.peer == spine.name}
            for leaf in pod:
                for prefix in _prefixes(leaf):
                    assert _wait_hops(lab, core.name, prefix, len(down)) == down
