"""What must be run to apply a change of the rendered files to a running cluster, per Slurm release.

    actions(old_files, new_files, release, nodes_added=(), nodes_removed=(), nodes_changed=(),
            lustre_new=False) -> list[Action]

``old_files``/``new_files`` are rendered trees as ``cluster_iac.render.build(...).files`` holds
them ({relative path: text}); ``old_files=None`` is a first deployment. ``release`` is a target
Slurm release ('22.05' ... '26.05'). The node arguments are names from the caller's object diff:
``nodes_changed`` are nodes whose equipment changes (they are drained first); names that are no
Slurm node of either tree are ignored; the added and removed nodes of slurm.conf are found here
too (a removed name slurm.conf still lists is drained like a changed one). ``lustre_new``: the
spec says the Lustre file system is new, so a target rewrite is allowed.

The result is one Action per kind, in the order they must be run (catalog/slurm_actions.py KINDS;
a first deployment has its own order, ``first_deployment``). Each says why, cites the table's
sources, and names what caused it. An Action with ``refused`` set (a Lustre target rewrite on a
file system the spec does not call new) is an error for the caller to report.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Collection
from dataclasses import dataclass

from cluster_iac.base.hostlist import HostlistError, fold, size
from cluster_iac.catalog.slurm_actions import ALL_NODES, CHANGED_NODES, KINDS, entry
from cluster_iac.change.conf_lines import (
    SlurmConf,
    changed_keys,
    gres_hosts,
    gres_nodes,
    lustre_targets,
    read_slurm_conf,
)

SLURM_CONF = "slurm/slurm.conf"
GRES_CONF = "slurm/gres.conf"
SEEDS = "cloud-init/seeds/*.jsonl"  # each host's network-config, its RoCE rails included

WHY = {
    "lustre-rewrite": "rewrite the Lustre targets (fsname, index or MGS NID changed)",
    "restart-opensm": "restart opensm on the subnet-manager hosts of the changed files",
    "reload-frr": "on each switch of the changed switches/<name>/ files: ifreload -a, then "
                  "reload FRR (frr-reload.py applies only the changed lines) where the switch "
                  "has a frr.conf (a management switch has none: ifreload only)",
    "reload-dns": "reload named on the boot server (rndc reload): a changed zone's serial rose "
                  "by one (the lock's zone line), so the secondaries it NOTIFYs transfer it",
    "reload-dhcp": "reload kea-dhcp4 on the boot server (its new reservations)",
    "apply-netplan": "netplan apply on the drained GPU nodes whose RoCE rails changed (RDMA "
                     "connections over a rail break when netplan re-creates its address): the "
                     "playbook's rails play installed their netplan file; a node that left the "
                     "routed fabric has its file removed first",
    "drain": "drain the nodes and wait for their jobs to end",
    "restart-lnet": "restart lnet on the hosts of the changed LNet files (unmount Lustre there "
                    "first: lnet does not stop while Lustre is mounted)",
    "restart-imex": "restart nvidia-imex on the hosts of the changed IMEX files",
    "restart-database": "restart MariaDB (slurmdbd's storage settings)",
    "restart-slurmdbd": "restart slurmdbd",
    "accounting": "run slurm/accounting.sh (QOS, accounts and users in slurmdbd)",
    "restart-slurmctld": "restart slurmctld",
    "restart-slurmd": "restart slurmd on the named nodes",
    "start-slurmd": "start slurmd on the nodes the change adds (it never ran there) and enable "
                    "it at boot",
    "reconfigure": "scontrol reconfigure: every daemon reads the new files",
    "resume": "resume the drained nodes",
    "restart-dcgm-exporter": "restart dcgm-exporter on the GPU nodes (dcgm-counters.csv)",
    "restart-snmp-exporter": "restart snmp_exporter beside Prometheus (snmp.yml)",
    "reload-prometheus": "reload Prometheus: prometheus.yml and its rule files",
    "new-jobs": "nothing to run: jobs started from now on read the new files",
    "none": "nothing to run for the daemons",
}
COMMANDS = {
    "drain": "scontrol update nodename={hosts} state=DRAIN reason=cluster-iac-change",
    "restart-database": "systemctl restart mariadb",
    "restart-slurmdbd": "systemctl restart slurmdbd",
    "accounting": "sh /etc/slurm/accounting.sh",
    "restart-slurmctld": "systemctl restart slurmctld",
    "restart-slurmd": "systemctl restart slurmd  # on {hosts}",
    "start-slurmd": "systemctl enable --now slurmd  # on {hosts}",
    "reconfigure": "scontrol reconfigure",
    "resume": "scontrol update nodename={hosts} state=RESUME",
    "restart-opensm": "systemctl restart opensm  # on the hosts of the changed files",
    "reload-frr": "ifreload -a && systemctl reload frr  # on each switch of the changed files "
                  "(a management switch: ifreload -a only)",
    "restart-lnet": "systemctl restart lnet  # on the hosts of the changed files",
    "restart-imex": "systemctl restart nvidia-imex  # on the hosts of the changed files",
    "restart-dcgm-exporter": "systemctl restart dcgm-exporter  # on the hosts of the file",
    "restart-snmp-exporter": "systemctl restart prometheus-snmp-exporter",
    "reload-prometheus": "systemctl reload-or-restart prometheus",
    "reload-dns": "rndc reload  # on the boot server",
    "reload-dhcp": "systemctl restart kea-dhcp4-server  # on the boot server",
    "apply-netplan": "netplan apply  # on {hosts}, drained (ansible/site.yml installs the "
                     "files)",
}
# A first deployment starts the services of the files it installs: glob -> kind, why
SERVICE_STARTS = (
    ("opensm/*.conf", "restart-opensm", "start OpenSM on the subnet-manager hosts first: "
     "IPoIB and LNet over InfiniBand need the fabric up"),
    ("lustre/lnet/*", "restart-lnet", "start lnet (it imports /etc/lnet.conf)"),
    ("imex/*", "restart-imex", "start nvidia-imex on the IMEX nodes"),
)
MONITORING_STARTS = (
    ("monitoring/dcgm-counters.csv", "restart-dcgm-exporter", "start dcgm-exporter"),
    ("monitoring/snmp.yml", "restart-snmp-exporter", "start snmp_exporter"),
    ("monitoring/prometheus.yml", "reload-prometheus", "start Prometheus"),
)


@dataclass(frozen=True)
class Action:
    """One thing to run: its kind, the nodes it runs on (a folded hostlist, '' when it is
    not per node), why, the sources that say so, what caused it, and the commands."""

    kind: str
    hosts: str
    why: str
    citation: str
    causes: tuple[str, ...]
    commands: tuple[str, ...] = ()
    refused: bool = False  # a Lustre rewrite the spec does not allow: an error
    tested: bool = False  # every table entry behind it is backed by a real-daemon test


@dataclass
class _Pending:
    hosts: set[str]
    causes: dict[str, None]
    sources: dict[str, None]
    tested: bool = True


def actions(old_files: dict[str, str] | None, new_files: dict[str, str], release: str,
            nodes_added: tuple[str, ...] | list[str] = (),
            nodes_removed: tuple[str, ...] | list[str] = (),
            nodes_changed: tuple[str, ...] | list[str] = (),
            lustre_new: bool = False, differ: Collection[str] | None = None) -> list[Action]:
    """The actions that apply ``new_files`` over ``old_files`` on Slurm ``release``, in run
    order (see the module docstring); ``old_files=None``: a first deployment's bring-up.
    ``differ``: every path whose bytes may differ (change_plan's), None: every path."""
    entry("key:*", release)  # an unknown release fails here, before anything is read
    if old_files is None:
        return first_deployment(new_files, release)
    plan = _Collector(release)
    old_conf = read_slurm_conf(old_files.get(SLURM_CONF, ""))
    new_conf = read_slurm_conf(new_files.get(SLURM_CONF, ""))
    plan.all_nodes = set(new_conf.nodes)
    slurm_nodes = set(old_conf.nodes) | set(new_conf.nodes)
    for path in sorted(set(old_files) | set(new_files) if differ is None else differ):
        old, new = old_files.get(path), new_files.get(path)
        if old == new:
            continue
        if path == SLURM_CONF:
            _slurm_conf(plan, old_conf, new_conf, set(nodes_added))
        elif path == GRES_CONF:
            plan.add(f"file:{path}", path, _gres_hosts(old or "", new or "", new_conf))
        elif fnmatch.fnmatchcase(path, "lustre/servers/*"):
            _lustre(plan, path, old or "", new or "", lustre_new)
        else:
            plan.add(f"file:{path}", path)
        if fnmatch.fnmatchcase(path, SEEDS):
            hosts = rail_hosts(old or "", new or "")
            if hosts:
                plan.add("rails:changed", path, hosts)
    # a node the caller removes that slurm.conf still lists is drained like a changed one
    hardware = sorted((set(nodes_changed) | set(nodes_removed)) & slurm_nodes
                      - (set(old_conf.nodes) - set(new_conf.nodes)))
    if hardware:
        plan.add("nodes:hardware", "equipment changed: " + _fold(hardware), set(hardware))
    return plan.result(slurm_conf_changed=(differ is None or SLURM_CONF in differ) and
                       old_files.get(SLURM_CONF) != new_files.get(SLURM_CONF))


def _slurm_conf(plan: _Collector, old: SlurmConf, new: SlurmConf, nodes_added: set[str]
                ) -> None:
    """slurm.conf's changed keys, node lines (added, removed, changed) and partition lines.
    A node the caller adds that the old file listed too (a new machine under an old name)
    counts as added: its slurmd is started."""
    for key in changed_keys(old, new):
        plan.add(f"key:{key}", f"{SLURM_CONF}: {key}")
    added = (set(new.nodes) - set(old.nodes)) | (nodes_added & set(new.nodes))
    removed = set(old.nodes) - set(new.nodes)
    changed = {h for h in set(old.nodes) & set(new.nodes)
               if old.nodes[h] != new.nodes[h]} - added
    for subject, hosts in (("added", added), ("removed", removed), ("changed", changed)):
        if hosts:
            plan.add(f"nodes:{subject}", f"{SLURM_CONF}: nodes {subject}: {_fold(hosts)}", hosts)
    if old.partitions != new.partitions or old.others != new.others:
        names = sorted(n for n in set(old.partitions) | set(new.partitions)
                       if old.partitions.get(n) != new.partitions.get(n))
        plan.add("partitions", f"{SLURM_CONF}: partitions " + (",".join(names) or "lines"))


def _gres_hosts(old: str, new: str, conf: SlurmConf) -> set[str]:
    """The nodes whose gres.conf lines changed (every node for a line naming none)."""
    before, after = gres_nodes(old), gres_nodes(new)
    hosts: set[str] = set()
    for line in set(before) ^ set(after):
        hosts |= set(gres_hosts(before.get(line, after.get(line)), list(conf.nodes)))
    return hosts


def _lustre(plan: _Collector, path: str, old: str, new: str, lustre_new: bool) -> None:
    before, after = lustre_targets(old), lustre_targets(new)
    moved = sorted(d for d in set(before) & set(after) if before[d] != after[d])
    plan.add(f"file:{path}", path)
    for device in moved:
        (fs0, ix0, mgs0), (fs1, ix1, mgs1) = before[device], after[device]
        what = ", ".join(f"{name} {a or '-'} -> {b or '-'}" for name, a, b in (
            ("fsname", fs0, fs1), ("index", ix0, ix1), ("mgsnode", mgs0, mgs1)) if a != b)
        plan.add("lustre:target", f"{path}: {device}: {what}", refused=not lustre_new)


def rail_hosts(old: str, new: str) -> set[str]:
    """The hosts of a seed table (one JSON line a host, emit/cloud_init.py) whose RoCE rails
    differ: the network-config entries with a ``routing-policy``, which only a rail has
    (plan/host_rails.py rail_config; the inventory's ``roce_rails`` holds the same), among
    the hosts of the table after the change: those whose netplan file the playbook rewrites,
    and those that had rails and have none now (a node that left the routed fabric: the
    action removes its file). A host the table no longer lists is no node any more."""
    def rails(text: str) -> dict[str, dict[str, object]]:
        found = {}
        for line in text.splitlines():
            row = json.loads(line)
            ethernets = row.get("network-config", {}).get("network", {}).get("ethernets", {})
            found[row["hostname"]] = {name: entry for name, entry in ethernets.items()
                                      if "routing-policy" in entry}
        return found

    before, after = rails(old), rails(new)
    # a removed node gets no playbook at all
    return {host for host, now in after.items() if before.get(host, {}) != now}


def _fold(hosts: set[str] | list[str]) -> str:
    """Names as a Slurm hostlist; names that are no hostlist themselves (read from a
    hand-edited file) are listed as they are, comma-separated."""
    names = sorted(hosts)
    odd = []
    for name in names:
        try:
            size(name)
        except HostlistError:
            odd.append(name)
    good = [n for n in names if n not in odd]
    return ",".join(([fold(good)] if good else []) + odd)


class _Collector:
    """Entries looked up and merged: one pending action per kind."""

    def __init__(self, release: str) -> None:
        self.release = release
        self.pending: dict[str, _Pending] = {}
        self.all_nodes: set[str] = set()
        self.refused = False

    def add(self, subject: str, cause: str, hosts: set[str] | None = None,
            refused: bool = False) -> None:
        found = entry(subject, self.release)
        self.refused |= refused
        for kind, scope in found.needs:
            item = self.pending.setdefault(kind, _Pending(set(), {}, {}))
            if scope == ALL_NODES:
                item.hosts |= self.all_nodes
            elif scope == CHANGED_NODES:
                item.hosts |= hosts or set()
            item.causes[cause] = None
            item.sources[found.source] = None
            item.tested &= found.tested is not None

    def result(self, slurm_conf_changed: bool) -> list[Action]:
        pending = self.pending
        slurmd = set().union(*(pending[k].hosts for k in ("restart-slurmd", "start-slurmd")
                               if k in pending))
        restarted_all = ("restart-slurmctld" in pending and "restart-slurmd" in pending
                         and slurmd >= self.all_nodes)
        if "start-slurmd" in pending and "restart-slurmd" in pending:
            # a node the change adds has no slurmd to restart: it is started, not restarted
            pending["restart-slurmd"].hosts -= pending["start-slurmd"].hosts
            if not pending["restart-slurmd"].hosts:
                pending.pop("restart-slurmd")
        if slurm_conf_changed and not restarted_all:
            # every slurmd reads the same slurm.conf (slurm.conf(5): "should be consistent
            # across all nodes"): the daemons that are not restarted re-read it
            item = pending.setdefault("reconfigure", _Pending(set(), {}, {}))
            item.causes.setdefault(f"{SLURM_CONF} changed", None)
            item.sources.setdefault(entry("key:*", self.release).source, None)
        elif restarted_all and "reconfigure" in pending:
            # the restarts read everything a reconfigure would: its causes go with them
            pending["restart-slurmctld"].causes.update(pending.pop("reconfigure").causes)
        if "drain" in pending:
            drained = pending["drain"].hosts & self.all_nodes  # removed nodes stay away
            if drained:
                pending["resume"] = _Pending(drained, dict(pending["drain"].causes),
                                             dict(pending["drain"].sources),
                                             pending["drain"].tested)
        if len(pending) > 1:
            pending.pop("none", None)  # 'nothing to run' says nothing beside real actions
        return [self._action(kind, pending[kind]) for kind in KINDS if kind in pending]

    def _action(self, kind: str, item: _Pending) -> Action:
        hosts = _fold(item.hosts) if item.hosts else ""
        command = COMMANDS.get(kind)
        return Action(kind, hosts, WHY[kind], "; ".join(item.sources), tuple(item.causes),
                      (command.format(hosts=hosts),) if command else (),
                      refused=kind == "lustre-rewrite" and self.refused,
                      tested=item.tested)


def first_deployment(files: dict[str, str], release: str) -> list[Action]:
    """The bring-up order that starts every release cleanly: MariaDB, slurmdbd, the QOS that
    partitions allow (26.05's slurmctld refuses to start on AllowQos naming QOS slurmdbd lacks;
    accounting.sh needs the gres/gpu TRES that slurmctld registers, so only the names come
    first), slurmctld, accounting.sh, slurmd on every node, then the rest."""
    conf = read_slurm_conf(files.get(SLURM_CONF, ""))
    nodes = _fold(list(conf.nodes)) if conf.nodes else ""
    source = ("tests/real/test_first_deployment_real.py (22.05, 24.11, 26.05): slurmctld 26.05 "
              "refuses to start while a partition's AllowQos names QOS slurmdbd lacks")
    steps: list[Action] = []

    def step(kind: str, why: str, cause: str | tuple[str, ...], commands: tuple[str, ...] = (),
             hosts: str = "", tested: bool = True) -> None:
        steps.append(Action(kind, hosts, why, source if tested else "",
                            (cause,) if isinstance(cause, str) else cause, commands,
                            tested=tested))

    def starts(table: tuple[tuple[str, str, str], ...]) -> None:
        """The services of the files present; the causes are the files (the playbook
        finds their hosts from them)."""
        for pattern, kind, why in table:
            paths = tuple(sorted(p for p in files if fnmatch.fnmatchcase(p, pattern)))
            if paths:
                step(kind, why, paths, (COMMANDS[kind],), tested=False)

    starts(SERVICE_STARTS)
    railed = set().union(*(rail_hosts("", text) for path, text in sorted(files.items())
                           if fnmatch.fnmatchcase(path, SEEDS)))
    if railed:
        step("apply-netplan", "apply the GPU nodes' RoCE rails (the playbook installed their "
             "netplan file) before slurmd starts on them", SEEDS,
             (COMMANDS["apply-netplan"].format(hosts=_fold(railed)),), hosts=_fold(railed),
             tested=False)

    if "slurm/mariadb-slurmdbd.cnf" in files:
        step("restart-database", "start MariaDB with slurm/mariadb-slurmdbd.cnf and create "
             "slurmdbd.conf's StorageUser", "slurm/mariadb-slurmdbd.cnf",
             ("systemctl start mariadb",))
    if "slurm/slurmdbd.conf" in files:
        pass_script = "slurm/slurmdbd-storage-pass.sh" in files
        step("restart-slurmdbd", "start slurmdbd" + (" (run slurmdbd-storage-pass.sh first: "
             "it writes StoragePass)" if pass_script else ""), "slurm/slurmdbd.conf",
             (("sh /etc/slurm/slurmdbd-storage-pass.sh",) if pass_script else ())
             + ("systemctl start slurmdbd",))
        qos = conf.allowed_qos()
        if qos and "slurm/accounting.sh" in files:
            step("accounting", "create the QOS the partitions' AllowQos name, before slurmctld "
                 "starts (Slurm 26.05 refuses to start without them; 22.05 and 24.11 ignore "
                 "them until a restart)", f"{SLURM_CONF}: AllowQos " + ",".join(qos),
                 ("sacctmgr -i add qos " + ",".join(qos),))
    if conf.keys or conf.nodes:
        step("restart-slurmctld", "start slurmctld", SLURM_CONF, ("systemctl start slurmctld",))
    if "slurm/accounting.sh" in files:
        step("accounting", "run accounting.sh once slurmctld has registered the cluster and its "
             "gres/gpu TRES", "slurm/accounting.sh", ("sh /etc/slurm/accounting.sh",))
    if nodes:
        step("restart-slurmd", "start slurmd on every node", SLURM_CONF,
             ("systemctl start slurmd  # on " + nodes,), hosts=nodes)
    if any(fnmatch.fnmatchcase(p, "lustre/servers/*") for p in files):
        step("lustre-rewrite", "format the new Lustre file system: lustre/servers/mds*.sh "
             "first (the MGS), then the OSS scripts", "lustre/servers/", tested=False)
    starts(MONITORING_STARTS)
    if any(p.startswith("nccl/") for p in files):
        step("new-jobs", "NCCL settings are read by each job", "nccl/", tested=False)
    return steps
