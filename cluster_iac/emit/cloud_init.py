"""cloud-init/ and pxe/: what a new node reads on its first boot.

- ``pxe/grub/grub.cfg`` and ``pxe/grub/grub-<cpu>.cfg``: the GRUB menu per architecture
  (x86_64 and arm64 UEFI; DHCP gives each its GRUB network image, emit/dhcp.py), which boots
  the OS image with cloud-init's NoCloud datasource seeded over HTTP from the boot server
  (``ds=nocloud;s=http://<server>/cloud-init/hosts/<address>/``, cloud-init docs, "NoCloud");
  GRUB rather than iPXE: the signed GRUB network images ship with Debian and Ubuntu for both
  architectures, so Secure Boot stays on;
- ``cloud-init/node-types/<node type>.user-data``: the node type's ``#cloud-config``;
- ``cloud-init/hosts/<host>/``: each host's seed (served at the host's management address,
  ``/cloud-init/hosts/<address>/``, emit/playbook_files.py), ``meta-data`` (instance id and
  hostname), ``network-config`` (network config version 2: the planned address, gateway, MTU
  and DNS of each of its networks) and ``user-data`` (its node type's).
The user-data writes /etc/cluster-iac/node.json, which names the host's Ansible groups: the
Slurm and Lustre roles come from ansible/site.yml run against the host, not from cloud-init.
YAML by the serializer; names are checked DNS labels, addresses from ``ipaddress``.
"""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Any

from cluster_iac.emit.ansible import ROLE_GROUPS, group_name
from cluster_iac.emit.base import GENERATED_BY, render_template
from cluster_iac.formats.json import json_text
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.boot import ARCHITECTURES, BootHost, BootPlan

NODE_FILE = "/etc/cluster-iac/node.json"
MENU_TIMEOUT_S = 5


def render(plan: Plan) -> dict[str, str]:
    boot: BootPlan | None = plan.boot
    if boot is None or boot.server_address is None:
        return {}
    files: dict[str, str] = {}
    user_data = {nt: node_type_user_data(plan, nt)
                 for nt in sorted({h.node_type for h in boot.hosts})}
    for nt, text in user_data.items():
        files[f"cloud-init/node-types/{nt}.user-data"] = text
    management = plan.addresses["management"]
    for host in boot.hosts:
        if host.hostname not in management:
            continue  # no management address: no network boot
        seed = f"cloud-init/hosts/{host.hostname}"
        files[f"{seed}/meta-data"] = meta_data(boot, host, management[host.hostname])
        files[f"{seed}/network-config"] = network_config(plan, boot, host)
        files[f"{seed}/user-data"] = user_data[host.node_type]
    files.update(menus(boot))
    return files


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


def meta_data(boot: BootPlan, host: BootHost, address: str) -> str:
    return yaml_text({"instance-id": f"{host.hostname}-{address}",
                      "local-hostname": f"{host.hostname}.{boot.domain}"},
                     [f"NoCloud meta-data of {host.hostname}", GENERATED_BY])


def network_config(plan: Plan, boot: BootPlan, host: BootHost) -> str:
    ethernets: dict[str, Any] = {}
    for subnet in boot.subnets:
        address = plan.addresses[subnet.network].get(host.hostname)
        if address is None or subnet.network == "bmc":
            continue  # the BMC has its own NIC, configured by DHCP
        prefix = IPv4Network(subnet.cidr).prefixlen
        config: dict[str, Any] = {"addresses": [f"{address}/{prefix}"], "mtu": subnet.mtu}
        if subnet.network == "management":
            config["routes"] = [{"to": "default", "via": subnet.gateway}]
            config["nameservers"] = {"addresses": [boot.server_address],
                                     "search": [boot.domain]}
        ethernets[subnet.interface] = config
    return yaml_text({"network": {"version": 2, "ethernets": ethernets}},
                     [f"cloud-init network-config (version 2) of {host.hostname}",
                      GENERATED_BY])


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
