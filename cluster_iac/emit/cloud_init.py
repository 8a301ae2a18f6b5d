"""cloud-init/ and pxe/: what a new node reads on its first boot.

- ``pxe/grub/grub.cfg`` and ``pxe/grub/grub-<cpu>.cfg``: the GRUB menu per architecture
  (x86_64 and arm64 UEFI; DHCP gives each its GRUB network image, emit/dhcp.py), which boots
  the OS image with cloud-init's NoCloud datasource seeded over HTTP from the boot server
  (``ds=nocloud;s=http://<server>/cloud-init/hosts/<address>/``, cloud-init docs, "NoCloud");
  GRUB rather than iPXE: the signed GRUB network images ship with Debian and Ubuntu for both
  architectures, so Secure Boot stays on;
- ``cloud-init/seeds/<node type>.user-data``: the node type's ``#cloud-config``, the same for
  every host of the type;
- ``cloud-init/seeds/<node type>.jsonl``: what is each host's own, one host a line (JSON
  Lines): its management address (the seed's folder), hostname, ``meta-data`` (instance id
  and hostname) and ``network-config`` (network config version 2: the planned address,
  gateway, MTU and DNS of each of its networks; on a routed RoCE compute fabric also each
  RoCE NIC on its leaf link: the /31's host end, the MTU, its own routing table with a
  default route through the leaf and the rule that looks it up for its source address,
  plan/host_rails.py); each line laid out from one template per shape of row (formats/
  json_template.py), byte for byte ``json.dumps`` of the row (seed_line of host_row, which
  tests/test_cloud_init_seeds.py holds it to);
- ``cloud-init/cluster-iac-seeds.py``: the script the playbook runs on the boot server
  (emit/playbook_files.py) that expands the tables into each host's seed folder under the
  web root, ``/cloud-init/hosts/<address>/{meta-data,network-config,user-data}``, writing
  only what changed. So a render writes two files per node type, not three per host (37,500
  files at 100,000 GPUs before).
The user-data writes /etc/cluster-iac/node.json, which names the host's Ansible groups: the
Slurm and Lustre roles come from ansible/site.yml run against the host, not from cloud-init.
YAML and JSON by the serializers; names are checked DNS labels, addresses from ``ipaddress``.
"""

from __future__ import annotations

import json
from itertools import count
from operator import attrgetter
from typing import Any

from cluster_iac.emit.ansible import ROLE_GROUPS, group_name
from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.formats.json import json_text
from cluster_iac.formats.json_template import JsonTemplate, Slot, fill, json_template
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import ARCHITECTURES, BootHost, BootPlan
from cluster_iac.plan.host_rails import HostRail, rail_entry

NODE_FILE = "/etc/cluster-iac/node.json"
MENU_TIMEOUT_S = 5
SEEDS = "cloud-init/seeds"  # the tables and each node type's user-data
SCRIPT = "cloud-init/cluster-iac-seeds.py"  # expands them on the boot server


def render(plan: Plan) -> dict[str, str]:
    boot: BootPlan | None = plan.boot
    if boot is None or boot.server_address is None:
        return {}
    files: dict[str, str] = {}
    management = plan.addresses["management"]
    lines: dict[str, list[str]] = {}
    networks = host_networks(plan, boot)  # made once for every host
    rails = plan.rails.get("compute", {})  # compile/plan_host_rails.py
    templates: dict[tuple[Any, ...], JsonTemplate] = {}
    for host in boot.hosts:
        if host.hostname not in management:
            continue  # no management address: no network boot
        lines.setdefault(host.node_type, []).append(host_line(
            boot, host, management[host.hostname], networks, rails.get(host.hostname, ()),
            templates))
    for path in seed_files(plan):
        nt, kind = path.removeprefix(f"{SEEDS}/").rsplit(".", 1)
        files[path] = (node_type_user_data(plan, nt) if kind == "user-data" else "".join(
            lines[nt]))
    files[SCRIPT] = render_template(
        "cloud-init/seeds.py.j2",
        comment="Expands cloud-init/seeds/ into each host's NoCloud seed (emit/cloud_init.py)")
    files.update(menus(boot))
    return files


def host_row(plan: Plan, boot: BootPlan, host: BootHost, address: str,
             networks: list[tuple[Any, ...]] | None = None, rails: tuple[HostRail, ...] = ()
             ) -> dict[str, Any]:
    """One host's row of its node type's seed table: its management address (its seed's
    folder), hostname, meta-data and network-config (``networks`` as network_config's)."""
    return {"address": address, "hostname": host.hostname,
            "meta-data": meta_data(boot, host, address),
            "network-config": network_config(plan, boot, host, networks, rails)}


def seed_line(row: dict[str, Any]) -> str:
    """One host's line of the seed table: what json_lines writes (``json.dumps`` of the row,
    keys sorted, ASCII). host_line writes the same text faster; this is what tests hold it
    to."""
    return json.dumps(row, sort_keys=True) + "\n"


_RAIL_SHAPE = attrgetter("port")  # what every host of the node type has on that rail


def host_line(boot: BootPlan, host: BootHost, address: str, networks: list[tuple[Any, ...]],
              rails: tuple[HostRail, ...], templates: dict[tuple[Any, ...], JsonTemplate]
              ) -> str:
    """``seed_line(host_row(...))`` of the host, from a template of its row (formats/
    json_template.py) made once per shape (which networks the host is on, and its rails'
    RailPorts: interface, MTU, fabric, table and priority) and kept in ``templates``: every
    GPU node's row has the same shape, so its keys are sorted and its constants written once,
    and only its own strings are escaped per host (100,000 RoCE GPUs: 12,500 rows of eight
    rails)."""
    name = host.hostname
    found = [hosts.get(name) for hosts, _interface, _prefix, _shared in networks]
    key = (tuple(a is not None for a in found), tuple(map(_RAIL_SHAPE, rails)))
    template = templates.get(key)
    if template is None:
        template = templates[key] = json_template(_row_shape(networks, found, rails))
    values = [address, name, *meta_data(boot, host, address).values()]
    values += [f"{a}/{prefix}" for a, (_h, _i, prefix, _s) in zip(found, networks, strict=True)
               if a is not None]
    for rail in rails:
        values += (rail.address, rail.gateway, rail.source)
    return fill(template, values) + "\n"


def _row_shape(networks: list[tuple[Any, ...]], found: list[str | None],
               rails: tuple[HostRail, ...]) -> dict[str, Any]:
    """host_row's row with a Slot for each string host_line puts in, in its order: the
    address, hostname, meta-data's two, each network's address and each rail's three."""
    slots = map(Slot, count())
    row = {"address": next(slots), "hostname": next(slots),
           "meta-data": {"instance-id": next(slots), "local-hostname": next(slots)}}
    on = [(interface, next(slots), shared)
          for a, (_hosts, interface, _prefix, shared) in zip(found, networks, strict=True)
          if a is not None]
    rail_slots = [(rail, next(slots), next(slots), next(slots)) for rail in rails]
    row["network-config"] = ethernets_config(on, rail_slots)
    return row


def seed_files(plan: Plan) -> list[str]:
    """The paths of the seed tables and user-data a render writes: each node type's
    user-data, and its table where one of its hosts has a management address."""
    assert plan.boot is not None
    management = plan.addresses["management"]
    booted = {h.node_type for h in plan.boot.hosts if h.hostname in management}
    return [path for nt in sorted({h.node_type for h in plan.boot.hosts})
            for path in [f"{SEEDS}/{nt}.jsonl"] * (nt in booted) + [f"{SEEDS}/{nt}.user-data"]]


def node_type_user_data(plan: Plan, node_type: str) -> str:
    roles = sorted({h.role for h in plan.boot.hosts if h.node_type == node_type})
    node = {"node_type": node_type, "groups": sorted(
        {ROLE_GROUPS[r] for r in roles if r in ROLE_GROUPS} | {group_name("type", node_type)}),
        "playbook": "ansible-playbook -i ansible/inventory.yml ansible/site.yml --limit <host>"}
    data = {"write_files": [{"path": NODE_FILE, "owner": "root:root", "permissions": "0644",
                             "content": json_text(node, sort_keys=True)}],
            "packages": ["python3"],
            "ssh_pwauth": False}
    # cloud-init reads a file as cloud-config only when its first line is exactly this
    return "#cloud-config\n" + yaml_text(data, [f"cloud-init user-data of node type {node_type}",
                                                 GENERATED_BY])


def meta_data(boot: BootPlan, host: BootHost, address: str) -> dict[str, str]:
    """NoCloud's meta-data: the instance id (a new address is a new instance) and hostname."""
    return {"instance-id": f"{host.hostname}-{address}",
            "local-hostname": f"{host.hostname}.{boot.domain}"}


def network_config(plan: Plan, boot: BootPlan, host: BootHost,
                   networks: list[tuple[Any, ...]] | None = None,
                   rails: tuple[HostRail, ...] = ()) -> dict[str, Any]:
    """Network config version 2 of the host's networks but the BMC's, and of its RoCE NICs
    (``rails``). ``networks``: what every host shares of each network (host_networks),
    where the caller made it once."""
    if networks is None:
        networks = host_networks(plan, boot)
    on = [(interface, f"{address}/{prefix}", shared)
          for hosts, interface, prefix, shared in networks
          if (address := hosts.get(host.hostname)) is not None]
    return ethernets_config(on, [(rail, rail.address, rail.gateway, rail.source)
                                 for rail in rails])


def ethernets_config(networks: list[tuple[str, Any, dict[str, Any]]],
                     rails: list[tuple[HostRail, Any, Any, Any]]) -> dict[str, Any]:
    """The network config of a host's networks, each (interface, address with its prefix
    length, what every host shares of it), and of its RoCE NICs, each (rail, address with its
    length, the leaf's address, the address alone): network_config's, and with Slots in
    place of the strings host_line's template of it."""
    ethernets: dict[str, Any] = {}
    for interface, address, shared in networks:
        ethernets[interface] = {"addresses": [address], **shared}
    for rail, address, gateway, source in rails:
        ethernets[rail.interface] = rail_entry(rail, address, gateway, source)
    return {"network": {"version": 2, "ethernets": ethernets}}


def host_networks(plan: Plan, boot: BootPlan) -> list[tuple[Any, ...]]:
    """Each subnet a host's OS configures (the BMC has its own NIC, configured by DHCP): its
    addresses by host, its interface, its prefix length and the rest of its config, the
    same for every host."""
    found = []
    for subnet in boot.subnets:
        if subnet.network == "bmc":
            continue
        prefix = subnet.cidr.partition("/")[2]  # as IPv4Network writes it: 'a.b.c.d/n'
        shared: dict[str, Any] = {"mtu": subnet.mtu}
        if subnet.network == "management":
            # 0.0.0.0/0, not netplan's 'default': cloud-init 22.4 (Debian 12) parses a route's
            # 'to' as an address and refuses 'default' (network_state._normalize_route)
            shared["routes"] = [{"to": "0.0.0.0/0", "via": subnet.gateway}]
            shared["nameservers"] = {"addresses": [boot.server_address],
                                     "search": [boot.domain]}
        found.append((plan.addresses[subnet.network], subnet.interface, prefix, shared))
    return found


def menus(boot: BootPlan) -> dict[str, str]:
    arches = sorted({h.arch for h in boot.hosts if h.arch in ARCHITECTURES})
    files = {"pxe/grub/grub.cfg": render_template(
        "pxe/grub.cfg.j2", comment="GRUB network boot: the menu of this CPU")}
    for arch in arches:
        files[f"pxe/grub/grub-{arch}.cfg"] = render_template(
            "pxe/menu.j2", comment=f"GRUB menu of {arch} UEFI nodes", arch=arch,
            timeout=MENU_TIMEOUT_S, title=f"Boot the cluster's {arch} image (cloud-init seed)",
            kernel=f"/images/{arch}/vmlinuz", initrd=f"/images/{arch}/initrd.img",
            server=boot.server_address)
    return files
