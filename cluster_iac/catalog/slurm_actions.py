"""What must be run to apply a change of a rendered file, per Slurm release: one table.

Each entry names a subject (a slurm.conf key, the node or partition lines of slurm.conf, or a
rendered file), the first release it holds for (it holds until the next entry of the same
subject), the actions it needs, the source that says so (the release's slurm.conf(5),
scontrol(1), gres.conf(5), slurmdbd.conf(5) or CHANGELOG, quoted), and the real-daemon test
that backs it on 22.05, 24.11 and 26.05 (tests/real/test_change_actions_real.py,
test_first_deployment_real.py and test_playbook_real.py), or None where no test does.

The man pages quoted are those of the Slurm git tags slurm-22-05-11-1, slurm-23-02-8-1,
slurm-23-11-11-1, slurm-24-05-8-1, slurm-24-11-7-1, slurm-25-05-8-1, slurm-25-11-7-1 and
slurm-26-05-3-1 (doc/man/), and of the packages the tests run (Debian 12's 22.05.8, trixie's
24.11.5, sid's 26.05.5). Two facts shape the table:
- 22.05 and 23.02: scontrol(1) reconfigure "does not restart the daemons ... Parameters
  requiring a restart will be noted in the slurm.conf(5) man page. The slurmctld daemon and
  all slurmd daemons must also be restarted if nodes are added to or removed from the cluster."
- From 23.11: scontrol(1) reconfigure "operates by creating new processes for the daemons ...
  This will not be able to change the daemons' listening TCP port settings or authentication
  mechanism", and slurm.conf(5) drops every per-key restart note but AuthType's and
  SwitchType's.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase

from cluster_iac.catalog.slurm_releases import SLURM_RELEASES, parse_version

# The action kinds, in the order they must be run (change/actions.py sorts by it).
KINDS = (
    "lustre-rewrite",     # refused unless the spec says the file system is new
    "restart-opensm",     # the fabric first: everything below talks over it
    "reload-frr",         # an Ethernet fabric switch's ports and routing (switches/<name>/)
    "reload-dns",         # named on the boot server: the new zones (new nodes resolve)
    "reload-dhcp",        # kea-dhcp4 on the boot server: the new reservations
    "drain",              # scontrol update state=DRAIN on the named nodes, before the rest
    "apply-netplan",      # a GPU node's RoCE rails applied (netplan apply), once it is drained
    "restart-lnet",       # on the hosts of the changed lustre/lnet file (Lustre unmounted)
    "restart-imex",       # nvidia-imex on the hosts of the changed imex file
    "restart-database",   # MariaDB, for slurmdbd's storage settings
    "restart-slurmdbd",
    "accounting",         # re-run accounting.sh: QOS a partition names exist before slurmctld
    "restart-slurmctld",
    "reconfigure",        # scontrol reconfigure (before slurmd starts on nodes it adds)
    "restart-slurmd",     # on the named nodes (a hostlist) whose slurmd runs
    "start-slurmd",       # on the nodes a change adds: their slurmd never ran (enable --now)
    "resume",             # scontrol update state=RESUME on the nodes drained first
    "restart-dcgm-exporter",  # on the GPU nodes: it reads dcgm-counters.csv at start
    "restart-snmp-exporter",  # beside Prometheus: it reads snmp.yml at start
    "reload-prometheus",  # prometheus.yml and its rule files re-read (SIGHUP)
    "new-jobs",           # nothing to run: jobs started after the change read it
    "none",
)
"""Action kinds, in run order. A change starts the slurmd of the nodes it adds
(``start-slurmd``) and restarts those that run; a first deployment's start of every slurmd is
the ``restart-slurmd`` kind, as its other starts are their services' restart kinds."""

ALL_NODES = "all"
"""``restart-slurmd`` scope: every node of slurm.conf (change/actions.py starts, not restarts,
the nodes the change adds)."""
CHANGED_NODES = "changed"
"""``restart-slurmd``/``start-slurmd``/``drain`` scope: the nodes whose lines (or hardware)
changed, or that were added."""

Need = tuple[str, str]  # (kind, node scope: '' for none, ALL_NODES or CHANGED_NODES)


@dataclass(frozen=True, eq=False, repr=False)
class Entry:
    """One row: what changing ``subject`` needs from release ``since`` on."""

    subject: str  # 'key:SlurmctldPort', 'nodes:added', 'file:nccl/*'
    since: str
    needs: tuple[Need, ...]
    source: str
    tested: str | None  # the real-daemon test that backs it


MAN = "slurm.conf(5)"
RECONF_2205 = ('scontrol(1) 22.05/23.02 reconfigure: "This command does not restart the '
               'daemons ... Parameters requiring a restart will be noted in the slurm.conf(5) '
               'man page"')
RECONF_2311 = ('scontrol(1) 23.11-26.05 reconfigure: "operates by creating new processes for '
               'the daemons ... will not be able to change the daemons\' listening TCP port '
               'settings or authentication mechanism"')
CTLD = (("restart-slurmctld", ""),)
CTLD_SLURMD = (("restart-slurmctld", ""), ("restart-slurmd", ALL_NODES))
RECONF = (("reconfigure", ""),)
TEST = "tests/real/test_change_actions_real.py::"
FIRST = "tests/real/test_first_deployment_real.py::"


def _ctld_only(key: str) -> list[Entry]:
    """Keys slurm.conf(5) of 22.05 and 23.02 says need 'A restart of slurmctld' (the sentence
    is gone from 23.11's, where reconfigure re-executes slurmctld)."""
    return [Entry(f"key:{key}", "22.05", CTLD, f'{MAN} 22.05/23.02 {key}: "A restart of '
                  'slurmctld is required for changes to this parameter to take effect"', None),
            Entry(f"key:{key}", "23.11", RECONF, RECONF_2311, None)]


ENTRIES: tuple[Entry, ...] = (
    # --- slurm.conf keys ----------------------------------------------------------------------
    Entry("key:*", "22.05", RECONF, f'{MAN} (all releases): "Changes to the configuration file '
          'take effect upon restart of Slurm daemons, daemon receipt of the SIGHUP signal, or '
          'execution of the command "scontrol reconfigure" unless otherwise noted"',
          TEST + "test_partition_and_key_changes"),
    *[e for key in ("AccountingStorageEnforce", "CredType", "JobContainerType", "MaxJobCount",
                    "MaxNodeCount", "PowerPlugin", "ProctrackType", "SchedulerParameters",
                    "SchedulerType", "SlurmctldHost", "SlurmctldParameters",
                    "StateSaveLocation") for e in _ctld_only(key)],
    Entry("key:SelectTypeParameters", "22.05", CTLD, f'{MAN} 22.05/23.02 SelectTypeParameters: '
          '"A restart of slurmctld is required"; measured: scontrol reconfigure 22.05 answers '
          '"SelectType change requires restart of the slurmctld daemon to take effect" and '
          'keeps the old value',
          TEST + "test_partition_and_key_changes"),
    Entry("key:SelectTypeParameters", "23.11", RECONF, RECONF_2311,
          TEST + "test_partition_and_key_changes"),
    Entry("key:TopologyPlugin", "22.05", CTLD, "measured: slurmctld 22.05 keeps its topology "
          "plugin on reconfigure (read_config.c calls slurm_topo_init, which returns early once "
          "a plugin is loaded; slurm.conf(5) 22.05 has no note)",
          TEST + "test_partition_and_key_changes"),
    Entry("key:TopologyPlugin", "23.11", RECONF, RECONF_2311,
          TEST + "test_partition_and_key_changes"),
    *[e for key in ("GresTypes", "PluginDir", "SelectType") for e in (
        Entry(f"key:{key}", "22.05", CTLD_SLURMD, f'{MAN} 22.05/23.02 {key}: "A restart of '
              'slurmctld and the slurmd daemons is required"', None),
        Entry(f"key:{key}", "23.11", RECONF, RECONF_2311, None))],
    Entry("key:CoreSpecPlugin", "22.05", (("restart-slurmd", ALL_NODES),), f'{MAN} 22.05/23.02 '
          'CoreSpecPlugin: "A restart of the slurmd daemons is required"', None),
    Entry("key:CoreSpecPlugin", "23.11", RECONF, RECONF_2311, None),
    Entry("key:AuthType", "22.05", CTLD_SLURMD, f'{MAN} 22.05-26.05 AuthType: "All Slurm daemons '
          'and commands must be terminated prior to changing the value of AuthType and later '
          'restarted"', None),
    Entry("key:AuthType", "23.11", CTLD_SLURMD, RECONF_2311, None),
    Entry("key:SlurmctldPort", "22.05", CTLD, f'{MAN} 22.05/23.02 SlurmctldPort: "A restart of '
          'slurmctld is required"', TEST + "test_port_changes"),
    Entry("key:SlurmctldPort", "23.11", CTLD, RECONF_2311 + f'; {MAN} 23.11-26.05: "Changes to '
          'TCP listening settings will require a daemon restart"', TEST + "test_port_changes"),
    Entry("key:SlurmdPort", "22.05", CTLD_SLURMD, f'{MAN} 22.05/23.02 SlurmdPort: "A restart of '
          'slurmctld is required"; slurmd listens on it', TEST + "test_port_changes"),
    Entry("key:SlurmdPort", "23.11", (("restart-slurmd", ALL_NODES),), RECONF_2311,
          TEST + "test_port_changes"),
    Entry("key:SwitchType", "22.05", (("drain", ALL_NODES), *CTLD_SLURMD), f'{MAN} 22.05/23.02 '
          'SwitchType: "All Slurm daemons, commands and running jobs must be restarted ... If '
          'running jobs exist at the time slurmctld is restarted with a new value of SwitchType, '
          'records of all jobs in any state may be lost"', None),
    Entry("key:SwitchType", "23.11", (("drain", ALL_NODES), ("reconfigure", "")), f'{MAN} '
          '23.11-26.05 SwitchType: "All Slurm daemons, commands and running jobs must be '
          'restarted or reconfigured"; running jobs must end first (records may be lost)', None),
    # --- the node and partition lines of slurm.conf --------------------------------------------
    Entry("nodes:added", "22.05", (*CTLD_SLURMD, ("start-slurmd", CHANGED_NODES)),
          RECONF_2205 + ': "The slurmctld daemon and all slurmd daemons must also be restarted '
          'if nodes are added to or removed from the cluster" (the added nodes\' slurmd never '
          'ran: it is started); measured: slurmctld 22.05 dies on such a reconfigure ("fatal: '
          'MaxNodeCount has changed (7->8) during reconfig, slurmctld must be restarted")',
          TEST + "test_node_added"),
    Entry("nodes:added", "23.11", (("reconfigure", ""), ("start-slurmd", CHANGED_NODES)),
          f'{MAN} 23.11-26.05 NODE CONFIGURATION: "Changes in node configuration (e.g. adding '
          'nodes, changing their processor count, etc.) require restarting or reconfiguring all '
          'slurmctld and slurmd daemons"; the new nodes\' slurmd is started',
          TEST + "test_node_added"),
    Entry("nodes:removed", "22.05", (("drain", CHANGED_NODES), *CTLD_SLURMD),
          RECONF_2205 + ': "... if nodes are added to or removed from the cluster"', None),
    Entry("nodes:removed", "23.11", (("drain", CHANGED_NODES), ("reconfigure", "")),
          f'{MAN} 23.11-26.05 NODE CONFIGURATION: "require restarting or reconfiguring all '
          'slurmctld and slurmd daemons"', None),
    Entry("nodes:changed", "22.05", (("restart-slurmctld", ""), ("restart-slurmd", CHANGED_NODES)),
          f'{MAN} 22.05/23.02 NODE CONFIGURATION: "Changes in node configuration (e.g. adding '
          'nodes, changing their processor count, etc.) require restarting both the slurmctld '
          'daemon and the slurmd daemons"; measured: scontrol reconfigure 22.05 answers "The '
          'node configuration changes that were made require restart of the slurmctld daemon '
          'to take effect"', TEST + "test_node_line_changed"),
    Entry("nodes:changed", "23.11", RECONF, f'{MAN} 23.11-26.05 NODE CONFIGURATION: "require '
          'restarting or reconfiguring all slurmctld and slurmd daemons"',
          TEST + "test_node_line_changed"),
    Entry("nodes:hardware", "22.05", (("drain", CHANGED_NODES), ("restart-slurmd", CHANGED_NODES)),
          "the lead's object diff says the nodes' equipment changes: their jobs end before the "
          "work, and their slurmd registers the new hardware when restarted",
          TEST + "test_node_added"),
    Entry("rails:changed", "22.05", (("drain", CHANGED_NODES), ("apply-netplan", CHANGED_NODES)),
          "netplan-apply(8): \"Apply the current netplan configuration to a running system\"; "
          "it re-creates the rails' addresses, so RDMA connections over them (whose GIDs are "
          "the addresses) break: the nodes are drained first and resumed after; the "
          "playbook's rails play installs /etc/netplan/60-cluster-iac-rails.yaml (a node "
          "that left the routed fabric has its file removed by the action) and applies "
          "nothing (not a Slurm daemon's: every release alike)",
          "tests/real/test_playbook_real.py::"
          "test_rails_are_installed_then_applied_only_once_their_nodes_are_drained"),
    Entry("partitions", "22.05", RECONF, f'{MAN} PARTITION CONFIGURATION: "If a partition that '
          'is in use is deleted from the configuration and slurm is restarted or reconfigured '
          '(scontrol reconfigure), jobs using the partition are canceled"',
          TEST + "test_partition_and_key_changes"),
    # --- rendered files --------------------------------------------------------------------------
    Entry("file:slurm/gres.conf", "22.05", (("restart-slurmctld", ""),
                                            ("restart-slurmd", CHANGED_NODES)),
          'gres.conf(5) 22.05/23.02 Type: "A restart of the slurmctld and slurmd daemons is '
          'required for changes to the Type option"; Cores: "A restart of the slurmctld is '
          'needed"', TEST + "test_gres_change"),
    Entry("file:slurm/gres.conf", "23.11", RECONF, 'CHANGELOG/slurm-23.11.md: "Changes to the '
          'Type option in gres.conf now can be applied with scontrol reconfig"; ' + RECONF_2311,
          TEST + "test_gres_change"),
    Entry("file:slurm/cgroup.conf", "22.05", RECONF, 'cgroup.conf(5): "Changes to the '
          'configuration file take effect upon restart of Slurm daemons, daemon receipt of the '
          'SIGHUP signal, or execution of the command "scontrol reconfigure""', None),
    Entry("file:slurm/topology.*", "22.05", RECONF, 'topology.conf(5): "Changes to the '
          'configuration file take effect upon ... "scontrol reconfigure""', None),
    Entry("file:slurm/slurmdbd.conf", "22.05", (("restart-slurmdbd", ""),), 'slurmdbd.conf(5): '
          '"Changes to the configuration file take effect upon restart of SlurmDBD"',
          FIRST + "test_a_slurmdbd_port_change_is_applied_by_restarting_slurmdbd"),
    Entry("file:slurm/slurmdbd-storage-pass.sh", "22.05", (("restart-slurmdbd", ""),),
          "the script writes slurmdbd.conf's Include'd StoragePass file: run it, then restart "
          "slurmdbd (slurmdbd.conf(5))", None),
    Entry("file:slurm/mariadb-slurmdbd.cnf", "22.05", (("restart-database", ""),),
          "MariaDB reads its option files at start (mariadbd --help: "
          "'Default options are read from the following files')", None),
    Entry("file:slurm/accounting.sh", "22.05", (("accounting", ""),), "the script's own header: "
          '"run it again after each change"; sacctmgr changes slurmdbd at once, no daemon '
          "reads the script", FIRST + "test_an_accounting_change_is_applied_by_accounting_sh"),
    Entry("file:slurm/healthcheck/*", "22.05", (("none", ""),), f'{MAN} HealthCheckProgram: '
          '"Fully qualified pathname of a script to execute as user root periodically": run '
          "anew each interval, never loaded", None),
    Entry("file:nccl/*", "22.05", (("new-jobs", ""),), "NCCL reads NCCL_* settings, nccl.conf "
          "and NCCL_TOPO_FILE when a communicator is created (docs.nvidia.com/deeplearning/nccl "
          "Environment Variables): running jobs keep what they read", None),
    Entry("file:lustre/servers/*", "22.05", (("none", ""),), "a target's fsname, index and MGS "
          "NID are written by mkfs.lustre once; other lines of the script only run when a "
          "target is made (change/actions.py finds the three)", None),
    Entry("lustre:target", "22.05", (("lustre-rewrite", ""),), "Lustre Operations Manual: "
          "fsname and index are set by mkfs.lustre (a new fsname or index is a new target: "
          "reformat); an MGS NID change needs tunefs.lustre --erase-param --mgsnode=... "
          "--writeconf on every target, with the file system stopped", None),
    # --- files of the other services: the hosts are those the playbook installs the file on
    Entry("file:lustre/lnet/*", "22.05", (("restart-lnet", ""),), "lustre-release "
          "lustre/scripts/systemd/lnet.service: ExecStart=lnetctl import /etc/lnet.conf, "
          "ExecStop=lustre_rmmod (it fails while Lustre is mounted: unmount first)", None),
    Entry("file:imex/*", "22.05", (("restart-imex", ""),), "NVIDIA IMEX guide: nvidia-imex "
          "reads config.cfg and its nodes_config.cfg once at start (imex/config.cfg's own "
          "header: \"restart the service after a change\")", None),
    Entry("file:opensm/*.conf", "22.05", (("restart-opensm", ""),), "opensm(8): the options "
          "file is read at start (-F); partition_config_file is read at start and on a "
          "heavy sweep: a restart applies both", None),
    Entry("file:switches/*", "22.05", (("reload-frr", ""),), "ifupdown2 ifreload(8): "
          "\"reloads interfaces configuration\" (only what changed); FRR frr-reload.py (systemctl "
          "reload frr) applies the difference between the running and the new frr.conf without "
          "restarting bgpd: sessions of unchanged neighbours stay up", None),
    Entry("file:monitoring/targets/*", "22.05", (("none", ""),), "Prometheus file_sd_config: "
          '"Changes to all defined files are detected via disk watches and applied '
          'immediately"', None),
    Entry("file:monitoring/dcgm-counters.csv", "22.05", (("restart-dcgm-exporter", ""),),
          "dcgm-exporter reads its collectors file (-f) at start", None),
    Entry("file:monitoring/snmp.yml", "22.05", (("restart-snmp-exporter", ""),),
          "snmp_exporter reads --config.file at start (and on SIGHUP)", None),
    Entry("file:monitoring/*", "22.05", (("reload-prometheus", ""),), "Prometheus "
          'configuration: "Prometheus can reload its configuration at runtime ... by sending '
          'SIGHUP"; rule_files are re-read with it',
          "tests/real/test_playbook_real.py::"
          "test_playbook_deploys_grows_and_restarts_only_what_the_plan_names"),
    Entry("file:dns/*", "22.05", (("reload-dns", ""),), "rndc(8) reload: \"Reload the "
          "configuration file and zones\"; a zone is reloaded when its SOA serial changed "
          "(plan/zones.py: the lock keeps each zone's serial and raises it by one when its "
          "records change); secondaries, NOTIFYed, transfer it: RFC 1982 counts the new serial "
          "greater",
          "tests/real/test_boot_real.py::test_named_serves_every_zone_of_the_example"),
    Entry("file:dhcp/kea-dhcp4.conf", "22.05", (("reload-dhcp", ""),), "Kea ARM, "
          "\"config-reload\": the server re-reads its configuration file (kea-shell or the "
          "control socket), as a restart of kea-dhcp4-server does",
          "tests/real/test_boot_real.py::test_kea_leases_the_imported_mac_its_planned_address"),
    Entry("file:*", "22.05", (("none", ""),), "not read by a Slurm daemon or a service "
          "(lustre/clients/, lustre/setstripe.sh, mig/, ansible/, terraform/, netbox/, "
          "cabling/, facility/, report.md)", None),
)


def _key(version: str) -> tuple[int, int]:
    return parse_version(version)


def entry(subject: str, release: str) -> Entry:
    """The entry for ``subject`` on ``release``: the newest entry of that subject whose
    ``since`` is not after the release. Subjects 'key:X' fall back to 'key:*' and 'file:P'
    to the first matching file pattern, so every key and file has an answer."""
    if release not in SLURM_RELEASES:
        raise ValueError(f"unknown Slurm release {release!r}: one of {', '.join(SLURM_RELEASES)}")
    candidates = [e for e in ENTRIES if e.subject.lower() == subject.lower()]
    if not candidates and subject.startswith("key:"):
        candidates = [e for e in ENTRIES if e.subject == "key:*"]
    if not candidates and subject.startswith("file:"):
        path = subject[5:]
        for pattern in dict.fromkeys(e.subject for e in ENTRIES if e.subject.startswith("file:")):
            if fnmatchcase(path, pattern[5:]):
                candidates = [e for e in ENTRIES if e.subject == pattern]
                break
    if not candidates:
        raise KeyError(subject)
    held = [e for e in candidates if _key(e.since) <= _key(release)]
    return max(held, key=lambda e: _key(e.since))


def subjects() -> list[str]:
    """Every subject of the table, in table order."""
    return list(dict.fromkeys(e.subject for e in ENTRIES))


LABELS = {
    ("reconfigure", ""): "reconfigure",
    ("restart-slurmctld", ""): "restart slurmctld",
    ("restart-slurmd", ALL_NODES): "restart every slurmd",
    ("restart-slurmd", CHANGED_NODES): "restart their slurmd",
    ("start-slurmd", CHANGED_NODES): "start their slurmd",
    ("drain", ALL_NODES): "drain every node",
    ("drain", CHANGED_NODES): "drain them",
    ("restart-slurmdbd", ""): "restart slurmdbd",
    ("restart-database", ""): "restart MariaDB",
    ("accounting", ""): "run accounting.sh",
    ("new-jobs", ""): "new jobs only",
    ("none", ""): "none",
    ("lustre-rewrite", ""): "rewrite the targets (an error unless the file system is new)",
    ("restart-opensm", ""): "restart opensm on its hosts",
    ("reload-frr", ""): "ifreload and reload FRR on that switch",
    ("restart-lnet", ""): "restart lnet on its hosts",
    ("restart-imex", ""): "restart nvidia-imex on its hosts",
    ("restart-dcgm-exporter", ""): "restart dcgm-exporter on its hosts",
    ("restart-snmp-exporter", ""): "restart snmp_exporter",
    ("reload-prometheus", ""): "reload Prometheus",
    ("reload-dns", ""): "reload named (rndc reload) on the boot server",
    ("reload-dhcp", ""): "reload kea-dhcp4 on the boot server",
    ("apply-netplan", CHANGED_NODES): "netplan apply on them",
}
ROWS = {
    "key:*": "any other slurm.conf key",
    "nodes:added": "nodes added",
    "nodes:removed": "nodes removed",
    "nodes:changed": "a node line changed",
    "nodes:hardware": "a node's equipment changed",
    "partitions": "partition lines",
    "lustre:target": "Lustre target fsname, index or MGS NID",
    "rails:changed": "a GPU node's RoCE rails (`cloud-init/seeds/*.jsonl`)",
    "file:*": "any other file",
}


def _label(found: Entry) -> str:
    order = {kind: n for n, kind in enumerate(KINDS)}
    needs = sorted(found.needs, key=lambda need: order[need[0]])
    text = ", ".join(LABELS[need] for need in needs)
    return text + (" ✓" if found.tested else "")


def readme_table() -> str:
    """The README's 'Change actions by Slurm release' table: one row per subject, one column
    per run of releases that agree on every row; ✓ marks an entry a real-daemon test backs."""
    releases = list(SLURM_RELEASES)
    rows = subjects()
    cells = {r: [_label(entry(s, r)) for s in rows] for r in releases}
    groups: list[list[str]] = []
    for release in releases:
        if groups and cells[groups[-1][0]] == cells[release]:
            groups[-1].append(release)
        else:
            groups.append([release])
    heads = [g[0] if len(g) == 1 else f"{g[0]}-{g[-1]}" for g in groups]
    lines = ["| change | " + " | ".join(heads) + " |", "|---|" + "---|" * len(groups)]
    for n, subject in enumerate(rows):
        name = ROWS.get(subject) or (f"`{subject[4:]}`" if subject.startswith("key:")
                                     else f"`{subject[5:]}`")
        lines.append(f"| {name} | " + " | ".join(cells[g[0]][n] for g in groups) + " |")
    return "\n".join(lines) + "\n"
