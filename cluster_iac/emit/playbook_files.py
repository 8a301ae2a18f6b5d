"""Which rendered file goes to which hosts, where, with which owner and mode (ansible/site.yml's
install plays, emit/playbook.py), and which files stay in the tree, each with its reason.

Every file a render makes is one or the other: tests/test_playbook.py fails on a file that is
neither installed nor listed in ``not_installed``.

Places on the hosts, each from the program that reads the file:
- Slurm: ``{{ slurm_conf_dir }}`` (the inventory's; slurm.conf(5) "should be consistent across
  all nodes"), slurmdbd's files as their headers say (templates/slurm/*.j2);
- LNet: ``/etc/lnet.conf``, which the lnet service imports (lustre/lnet/<type>.yaml's header);
- Lustre clients (compute and login nodes, plan.lustre...lnet.clients): fstab's lines into
  /etc/fstab (one line per mount point, replaced in place), the scripts as root-run tools;
  the servers' format scripts on their own server, mode 0700, never run by the playbook;
- IMEX: plan/imex.py's /etc/nvidia-imex;
- MIG: the layout as ``/etc/nvidia-mig-manager/cluster-iac.yaml`` and the systemd drop-in that
  has nvidia-mig-manager apply it at boot (emit/mig.py, NVIDIA/mig-parted deployments/systemd);
- OpenSM: ``/etc/opensm/opensm.conf`` and ``partitions.conf`` (each file's own header), the
  master's file on the first subnet_manager host, the standby's on the others;
- monitoring: Prometheus's files under ``/etc/prometheus`` (Debian's prometheus package reads
  /etc/prometheus/prometheus.yml; rule_files and file_sd paths are relative to it), snmp.yml as
  /etc/prometheus/snmp.yml (Debian's prometheus-snmp-exporter's default) on the same host
  (prometheus.yml scrapes snmp_exporter at 127.0.0.1:9116), dcgm-counters.csv on the GPU node
  types (dcgm-exporter -f). Prometheus runs on the first service node, else the first
  controller.
- the boot server (networks.boot_server, plan/boot.py): the zones under /var/lib/bind/cluster-iac
  and their zone statements as /etc/bind/named.conf.cluster-iac (named.conf includes it; Debian
  12's bind9), Kea's configuration as /etc/kea/kea-dhcp4.conf (kea-dhcp4-server's default), the
  GRUB menus under the TFTP root /srv/tftp/grub (tftpd-hpa's default root), the cloud-init
  seed tables and each node type's user-data under /var/lib/cluster-iac/cloud-init, and the
  script that expands them into each host's seed under the web root
  /var/www/html/cloud-init/hosts (emit/cloud_init.py), which the play runs (``how``: 'run').
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable

from cluster_iac.emit.ansible import NCCL_TOPO_DIR, ROLE_GROUPS, group_name
from cluster_iac.emit.cloud_init import SCRIPT, seed_files
from cluster_iac.emit.dns import ZONE_DIR
from cluster_iac.emit.mig import CONFIG_FILE as MIG_CONFIG
from cluster_iac.emit.mig import DROP_IN as MIG_DROP_IN
from cluster_iac.emit.qos import (
    SCRIPT_DEST,
    UNIT_DEST,
    UNIT_PATH,
    host_script_path,
    roce_node_types,
)
from cluster_iac.emit.slurmdbd import SLURM_USER
from cluster_iac.plan import Plan
from cluster_iac.plan.imex import CONFIG_DIR as IMEX_DIR
from cluster_iac.plan.imex import NODES_FILE
from cluster_iac.plan.subnet import infiniband_fabrics, sm_hosts

SLURM_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf", "topology.yaml")
SLURM_GROUPS = ("controllers", "compute", "login")
MARIADB_CNF = "/etc/mysql/mariadb.conf.d/60-slurmdbd.cnf"
LNET_CONF = "/etc/lnet.conf"
FSTAB = "/etc/fstab"
SBIN = "/usr/local/sbin"
OPENSM_DIR = "/etc/opensm"
PROMETHEUS_DIR = "/etc/prometheus"
ROCE_QOS_SCRIPT = SCRIPT_DEST  # run as root at every boot by ROCE_QOS_UNIT
ROCE_QOS_UNIT = UNIT_DEST
DCGM_COUNTERS = "/etc/dcgm-exporter/dcgm-counters.csv"
# What emit/monitoring renders for Prometheus's host (a file a cluster lacks, such as
# rules/fabric.yml without a fabric to watch, is skipped by the play)
MONITORING_FILES = ("prometheus.yml", "snmp.yml", "rules/targets.yml", "rules/power.yml",
                    "rules/gpu.yml", "rules/fabric.yml", "targets/node.json", "targets/dcgm.json",
                    "targets/pdu.json", "targets/infiniband.json")

NAMED_INCLUDE = "/etc/bind/named.conf.cluster-iac"
KEA_CONF = "/etc/kea/kea-dhcp4.conf"
TFTP_GRUB = "/srv/tftp/grub"
SEED_ROOT = "/var/www/html/cloud-init/hosts"
SEED_TABLES = "/var/lib/cluster-iac/cloud-init"
SEED_SCRIPT = f"{SBIN}/cluster-iac-seeds"

NOT_INSTALLED = {
    "dhcp/hosts-without-mac.txt": "the devices with no MAC in the lock yet, for the operator "
                                  "(cluster-iac macs import)",
    "ansible/*": "the playbook and inventory themselves: read by ansible-playbook on the "
                 "operator's machine",
    "cabling/*": "work orders, bills of material and labels for people",
    "drawings/*": "drawings for people",
    "facility/*": "power tables for the facility's electricians",
    "netbox/*": "imported into NetBox (netbox-community/netbox-initializers), not onto hosts",
    "terraform/*": "read by terraform on the operator's machine",
    "report.*": "the design report, for people",
    "acceptance/*": "acceptance jobs the operator submits with acceptance/<partition>/"
                    "submit.sh (sbatch) from a checkout of the rendered tree, once, on "
                    "delivery; `cluster-iac acceptance check` reads their bars beside their "
                    "results",
    "lustre/layouts.json": "the layouts of lustre/setstripe.sh as data, for tools; no host "
                           "program reads it",
    "switches/avd/*": "Arista AVD eos_designs inputs, read by AVD (ansible-avd or pyavd) on "
                       "the operator's machine, which makes and deploys the EOS configurations",
    "qos/*.yaml": "the switches' RoCE QoS as data, for people and switch tooling; the "
                  "switch configurations apply it",
    "opensm/*/topology.ibnetdiscover": "the fabric as planned, for `cluster-iac fabric verify` "
                                       "and ibsim; OpenSM discovers the fabric itself",
    "switches/*": "each Ethernet fabric switch's own FRR and ifupdown2 configuration: the "
                  "switches run their own network OS (Cumulus Linux, SONiC) and are not hosts "
                  "of the cluster's playbook; copy them onto each switch "
                  "(docs/ethernet-fabric.md, 'Apply the configurations')",
}
"""Rendered files the playbook does not install (glob -> why)."""


def not_installed(plan: Plan) -> dict[str, str]:
    """NOT_INSTALLED, plus the subnet-manager files of a fabric that names no host to run
    OpenSM (fabric.<network>.subnet_manager.hosts): there is no host to put them on."""
    found = dict(NOT_INSTALLED)
    for network in infiniband_fabrics(plan):
        if not sm_hosts(plan, network):
            found[f"opensm/{network}/*"] = (f"fabric.{network}.subnet_manager.hosts names no "
                                            "host: install them on the host you choose")
    return found


def is_installed(path: str, plan: Plan) -> bool:
    """Whether a rendered path is one the playbook installs (not in ``not_installed``)."""
    return not any(fnmatch.fnmatchcase(path, p) for p in not_installed(plan))


def prometheus_host(plan: Plan) -> str:
    """The host Prometheus (and snmp_exporter beside it) runs on: an inventory pattern."""
    roles = {d.role for d in plan.devices if d.kind == "node"}
    return "service[0]" if "service" in roles else "controllers[0]"


def installs(plan: Plan) -> dict[str, list[dict[str, str]]]:
    """Inventory pattern -> the files it gets: {src (in the tree), dest, owner, group, mode,
    how}; ``how`` is 'copy' (the whole file), 'lines' (each line into ``dest``), 'run' (a
    script copied, then run with the paths of ``args``, space-separated) or 'enable' (a systemd
    unit copied, then enabled and started: ``systemctl daemon-reload``, ``systemctl enable
    --now``)."""
    found: dict[str, list[dict[str, str]]] = {}

    def add(group: str, *files: dict[str, str]) -> None:
        found.setdefault(group, []).extend(files)

    conf_dir = "{{ slurm_conf_dir }}"
    present = {ROLE_GROUPS[d.role] for d in plan.devices if d.kind == "node"}
    for group in SLURM_GROUPS:
        if group in present:
            add(group, *(file(f"slurm/{name}", f"{conf_dir}/{name}") for name in SLURM_FILES))
    acct = plan.scheduling.accounting
    if acct is not None:
        add("controllers", file("slurm/accounting.sh", f"{conf_dir}/accounting.sh", mode="0755"))
        add(plain(acct.dbd_host),
            file("slurm/slurmdbd.conf", f"{conf_dir}/slurmdbd.conf", owner=SLURM_USER,
                 mode="0600"),
            file("slurm/slurmdbd-storage-pass.sh", f"{conf_dir}/slurmdbd-storage-pass.sh",
                 mode="0700"),
            file("slurm/mariadb-slurmdbd.cnf", MARIADB_CNF))
    health = plan.scheduling.health
    for node in health.nodes if health is not None else ():
        add(group_name("type", node.node_type),
            file(f"slurm/healthcheck/{node.node_type}.sh", plain(health.program), mode="0755"))
    for type_name, env in sorted(plan.nccl.items()):
        group = group_name("type", type_name)
        add(group, file(f"nccl/{type_name}.nccl.conf", "{{ nccl_conf_path }}"),
            file(f"nccl/{type_name}.env", f"{NCCL_TOPO_DIR}/{type_name}.env"),
            file("monitoring/dcgm-counters.csv", DCGM_COUNTERS))
        if env.topo_file:
            add(group, file(f"nccl/{type_name}.topo.xml", "{{ nccl_topo_file }}"))
    for type_name in roce_node_types(plan):  # every node type with a RoCE port, on any fabric
        add(group_name("type", type_name),
            file(host_script_path(type_name), ROCE_QOS_SCRIPT, mode="0755"),
            {**file(UNIT_PATH, ROCE_QOS_UNIT), "how": "enable"})
    _lustre(plan, add, present)
    if plan.imex is not None:
        add(imex_pattern(plan), file("imex/config.cfg", f"{IMEX_DIR}/config.cfg"),
            # the node's own domain's file (the play's cluster_iac_imex_domain, from the plan)
            {**file("imex/_/nodes_config.cfg", NODES_FILE),
             "src": "imex/{{ cluster_iac_imex_domain[inventory_hostname] }}/nodes_config.cfg"})
    used = {n.node_type for n in plan.compute_nodes}  # as emit/mig.py: the types nodes use
    for name, nt in sorted(plan.node_types.items()):
        if nt.mig and name in used:
            add(group_name("type", name), file(f"mig/{name}.yaml", MIG_CONFIG),
                file(f"mig/{name}.override.conf", MIG_DROP_IN))
    for network in infiniband_fabrics(plan):
        hosts = [plain(h) for h in sm_hosts(plan, network)]
        if hosts:
            add(":".join(hosts), file(f"opensm/{network}/partitions.conf",
                                      f"{OPENSM_DIR}/partitions.conf"))
            add(hosts[0], file(f"opensm/{network}/opensm.conf", f"{OPENSM_DIR}/opensm.conf"))
        if hosts[1:]:
            add(":".join(hosts[1:]), file(f"opensm/{network}/opensm-standby.conf",
                                          f"{OPENSM_DIR}/opensm.conf"))
    add(prometheus_host(plan), *(file(f"monitoring/{name}", f"{PROMETHEUS_DIR}/{name}")
                                 for name in MONITORING_FILES))
    _boot(plan, add)
    return found


def _boot(plan: Plan, add: Callable[..., None]) -> None:
    """The boot server's files: zones, Kea, GRUB menus and every host's cloud-init seed."""
    boot = plan.boot
    if boot is None or boot.server is None or boot.server_address is None:
        return
    server = plain(boot.server)
    add(server, *(file(f"dns/{zone}.zone", f"{ZONE_DIR}/{zone}.zone") for zone in boot.zones),
        file("dns/named.conf.zones", NAMED_INCLUDE),
        file("dhcp/kea-dhcp4.conf", KEA_CONF, mode="0640"),
        file("pxe/grub/grub.cfg", f"{TFTP_GRUB}/grub.cfg"))
    arches = sorted({h.arch for h in boot.hosts})
    add(server, *(file(f"pxe/grub/grub-{arch}.cfg", f"{TFTP_GRUB}/grub-{arch}.cfg")
                  for arch in arches))
    add(server, *(file(path, f"{SEED_TABLES}/{path.rsplit('/', 1)[1]}")
                  for path in seed_files(plan)),
        {**file(SCRIPT, SEED_SCRIPT, mode="0755"), "how": "run",
         "args": f"{SEED_TABLES} {SEED_ROOT}"})


def _lustre(plan: Plan, add: Callable[..., None], present: set[str]) -> None:
    """LNet per node type, the clients' files on compute and login, each server's script."""
    lustre = plan.lustre
    if lustre is None or lustre.hardware is None:
        return
    hardware = lustre.hardware
    for type_name in sorted(hardware.lnet.interfaces):
        add(group_name("type", type_name), file(f"lustre/lnet/{type_name}.yaml", LNET_CONF))
    clients = ":".join(g for g in ("compute", "login") if g in present)
    if clients:
        add(clients, {**file("lustre/clients/fstab", FSTAB), "how": "lines"},
            file("lustre/clients/mount.sh", f"{SBIN}/lustre-mount.sh", mode="0755"),
            file("lustre/clients/tune.sh", f"{SBIN}/lustre-tune.sh", mode="0755"),
            file("lustre/setstripe.sh", f"{SBIN}/lustre-setstripe.sh", mode="0755"))
    for server in hardware.servers:
        # formats the targets: installed for the operator to run once, never by the playbook
        add(plain(server.hostname), file(f"lustre/servers/{server.hostname}.sh",
                                         f"{SBIN}/lustre-format-targets.sh", mode="0700"))


def imex_pattern(plan: Plan) -> str:
    """The hosts that run IMEX: the groups of its node types."""
    assert plan.imex is not None
    return ":".join(group_name("type", t) for t in plan.imex.node_types)


def file_hosts(plan: Plan) -> dict[str, str]:
    """Rendered file -> the inventory pattern of the hosts it is installed on, for the files
    whose change restarts a service there (LNet, IMEX, OpenSM, the monitoring files): the
    change plan names the file, the playbook finds the hosts here."""
    found: dict[str, str] = {}
    for group, files in installs(plan).items():
        for item in files:
            if "{{" not in item["src"]:
                found[item["src"]] = (f"{found[item['src']]}:{group}" if item["src"] in found
                                      else group)
    if plan.imex is not None:  # a domain's peers: its nodes
        for domain in plan.imex.domains:
            found[f"imex/{plain(domain.name)}/nodes_config.cfg"] = ":".join(
                plain(n) for n in domain.nodes)
    return {path: hosts for path, hosts in sorted(found.items())
            if path.startswith(("lustre/lnet/", "imex/", "opensm/", "monitoring/", "dns/",
                                "dhcp/"))}


def file(src: str, dest: str, owner: str = "root", mode: str = "0644") -> dict[str, str]:
    return {"src": plain(src), "dest": dest, "owner": owner, "group": owner, "mode": mode,
            "how": "copy"}


def plain(text: str) -> str:
    """A name from the spec, checked to hold no Jinja delimiter: Ansible templates every
    string of a task, so such a name would run as code. The spec's name patterns already
    refuse braces (spec/strings.py Name, spec/scheduling.py AbsolutePath, HostName)."""
    if "{" in text or "}" in text:
        raise ValueError(f"{text!r} would be read by Ansible as a template")
    return text
