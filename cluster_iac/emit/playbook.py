"""ansible/site.yml and ansible/actions.yml: install the rendered files, then run the change plan.

    ansible-playbook -i ansible/inventory.yml ansible/site.yml \\
        -e cluster_iac_changes=changes.json -e cluster_iac_release=22.05

The playbook is data made here and written by the YAML serializer (no template: a spec string
is a quoted scalar, never a task). Its plays, in order:

1. read the change plan (``cluster-iac changes --format json``) for the target release and stop
   before anything is installed when it is missing, names no such release, or refuses an action;
2. one play per inventory group that needs files: each rendered file copied from the tree to the
   path the inventory's variables name (``slurm_conf_dir``, ``nccl_conf_path``,
   ``nccl_topo_file``) or the file's own header names, with its owner and mode (the Lustre fstab
   lines merged into /etc/fstab); nothing else is touched, and a file this cluster does not
   render (no topology.conf, no accounting) is skipped;
3. the GPU nodes' RoCE rails (tag ``rails``): on each node with ``roce_rails`` in the inventory
   (a routed RoCE compute fabric, plan/host_rails.py), its NICs' addresses, MTU, routing
   tables and source rules as the netplan file ``/etc/netplan/60-cluster-iac-rails.yaml``
   (mode 0600: netplan warns on a file others can read), written by Ansible's YAML serializer
   (``to_nice_yaml``, keys in the inventory's order: netplan refuses ``ethernets`` before
   ``version``) from the inventory's data; ``netplan apply`` runs by a handler, only on
   the nodes whose file changed (not in check mode: the command module does not run there).
   The node's cloud-init network-config holds the same entries, but nothing delivers it
   (NoCloud over HTTP does not read network-config, docs/boot.md);
4. the change plan's actions in its order (a first deployment's bring-up order included), one
   include of actions.yml per action, which runs only the tasks of that action's kind; a
   service's restart (opensm, lnet, nvidia-imex, the exporters, Prometheus) runs on the hosts
   its changed files are installed on (the action's causes are the files).

How daemons are (re)started and how scontrol is reached are variables (``cluster_iac_service``,
``cluster_iac_scontrol``, ``cluster_iac_hostnames``, argv lists; ``cluster_iac_admin``, a prefix
of the accounting commands, empty by default; ``cluster_iac_netplan_apply``, the rails
handler's argv, ``netplan apply`` by default) so a test sandbox can stand in for systemd and
netplan; ``cluster_iac_root`` prefixes every installed path (empty on a real cluster). Which
rendered file goes where is emit/playbook_files.py's table.
"""

from __future__ import annotations

import posixpath

from cluster_iac.emit.ansible import SLURM_CONF_DIR, group_name
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.playbook_files import file_hosts, imex_pattern, installs, plain
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan

ROOT = "{{ cluster_iac_root | default('') }}"
TREE = "{{ playbook_dir }}/.."
SERVICE = ["systemctl"]
SCONTROL = ["scontrol"]
HOSTNAMES = ["scontrol", "show", "hostnames"]
NETPLAN_APPLY = ["netplan", "apply"]
# netplan(5): files in /etc/netplan are read in lexical order, a later one overriding an
# earlier one's keys; cloud-init writes 50-cloud-init.yaml, so 60- comes after it
RAILS_FILE = "/etc/netplan/60-cluster-iac-rails.yaml"
# The service each kind restarts on the hosts of its files (playbook_files.file_hosts), and
# how: systemd unit names of the Debian and NVIDIA packages. Prometheus is reloaded where it
# runs and started where it does not (systemctl reload-or-restart).
UNITS = {
    "restart-opensm": ("restart", "opensm"),
    "restart-lnet": ("restart", "lnet"),
    "restart-imex": ("restart", "nvidia-imex"),
    "restart-dcgm-exporter": ("restart", "dcgm-exporter"),
    "restart-snmp-exporter": ("restart", "prometheus-snmp-exporter"),
    "reload-prometheus": ("reload-or-restart", "prometheus"),
    "reload-dns": ("reload-or-restart", "named"),  # Debian 12 bind9: named.service
    "reload-dhcp": ("restart", "kea-dhcp4-server"),
}


def render(plan: Plan) -> dict[str, str]:
    return {"ansible/site.yml": yaml_text(site(plan), [GENERATED_BY]),
            "ansible/actions.yml": yaml_text(actions(plan), [GENERATED_BY])}


def _play_vars(plan: Plan, group: str) -> dict[str, object]:
    """What a group's install play needs beyond its files: each IMEX node's NVLink domain."""
    if plan.imex is None or group != imex_pattern(plan):
        return {}
    return {"cluster_iac_imex_domain": {plain(node): plain(domain.name)
                                        for domain in plan.imex.domains
                                        for node in domain.nodes}}


def _directories(files: list[dict[str, str]]) -> list[dict[str, object]]:
    """One item per directory the files go into, not one per file (each item is a task run
    on every host: 42 seeds in one folder were 42 runs of the file module). The first file's
    dest names the directory, made when any of its files is in the tree; a dest that is one
    variable ('{{ nccl_conf_path }}') is a directory of its own until the play reads it."""
    dests: dict[str, str] = {}
    srcs: dict[str, list[str]] = {}
    for f in files:
        dest = f["dest"]
        key = dest if dest.endswith("}}") and "/" not in dest else posixpath.dirname(dest)
        dests.setdefault(key, dest)
        srcs.setdefault(key, []).append(f["src"])
    return [{"dest": dests[key], "srcs": srcs[key]} for key in dests]


def _install_tasks(files: list[dict[str, str]]) -> list[dict[str, object]]:
    """The directories, the whole files, the files whose lines go into a host's file (the
    Lustre fstab lines into /etc/fstab: each replaces the line of its mount point), and the
    scripts run once their files are in place (the boot server's cloud-init seeds: changed
    when the script says it wrote or removed something)."""
    present = "(playbook_dir ~ '/../' ~ item.src) is file"
    copies = [f for f in files if f["how"] in ("copy", "run", "enable")]
    lines = [f for f in files if f["how"] == "lines"]
    tasks: list[dict[str, object]] = [{
        "name": "the directories",
        "ansible.builtin.file": {"path": f"{ROOT}{{{{ item.dest | dirname }}}}",
                                 "state": "directory", "mode": "0755"},
        "loop": _directories(files), "loop_control": {"label": "{{ item.dest | dirname }}"},
        "when": "[playbook_dir ~ '/..'] | product(item.srcs) | map('join', '/') "
                "| select('file') | list | length > 0"}, {
        "name": "the files",
        "ansible.builtin.copy": {
            "src": f"{TREE}/{{{{ item.src }}}}", "dest": f"{ROOT}{{{{ item.dest }}}}",
            "owner": "{{ item.owner }}", "group": "{{ item.group }}",
            "mode": "{{ item.mode }}"},
        "loop": copies, "loop_control": {"label": "{{ item.src }} -> {{ item.dest }}"},
        "when": present}]
    for item in lines:
        tasks.append({
            "name": f"the lines of {item['src']}",
            "ansible.builtin.lineinfile": {
                "path": f"{ROOT}{item['dest']}", "line": "{{ line }}", "create": True,
                "regexp": "^\\S+\\s+{{ line.split()[1] | regex_escape }}\\s",
                "owner": item["owner"], "group": item["group"], "mode": item["mode"]},
            "loop": f"{{{{ lookup('ansible.builtin.file', playbook_dir ~ '/../{item['src']}')"
                    ".splitlines() | map('trim') | reject('match', '#') | reject('equalto', '') "
                    "| list }}",
            "loop_control": {"loop_var": "line",
                             "label": f"{item['src']} -> {item['dest']}"}})
    for item in files:
        if item["how"] == "run":
            tasks.append({
                "name": f"run {item['dest']}",
                "ansible.builtin.command": {"argv": [
                    f"{ROOT}{path}" for path in [item["dest"], *item["args"].split()]]},
                "register": "_ran",
                "changed_when": "' wrote 0 files, removed 0 folders' not in _ran.stdout"})
    tasks += _enable_tasks([f for f in files if f["how"] == "enable"])
    return tasks


def _enable_tasks(units: list[dict[str, str]]) -> list[dict[str, object]]:
    """Each unit copied (above) enabled and started: systemd reads the new file
    (daemon-reload), then ``enable --now`` links it into its targets' wants (so it runs at
    every boot) and starts it (a oneshot that stays active starts once). Through
    ``cluster_iac_service`` as the actions' restarts, so a sandbox can stand in; changed only
    when systemctl created a link."""
    if not units:
        return []
    service = _default("cluster_iac_service", SERVICE)
    names = [posixpath.basename(u["dest"]) for u in units]
    host = {"CLUSTER_IAC_HOST": "{{ inventory_hostname }}"}  # for a sandbox's stand-in
    return [{"name": "systemd reads the units", "ansible.builtin.command": {
                "argv": f"{{{{ {service} + ['daemon-reload'] }}}}"},
             "environment": host, "changed_when": False},
            {"name": "the units enabled and started",
             "ansible.builtin.command": {
                 "argv": f"{{{{ {service} + ['enable', '--now', item] }}}}"},
             "loop": names, "register": "_enabled", "environment": host,
             "changed_when": "'Created symlink' in _enabled.stdout ~ _enabled.stderr"}]


def site(plan: Plan) -> list[dict[str, object]]:
    """The playbook: check the plan, install the files, run the actions."""
    plays: list[dict[str, object]] = [{
        "name": "read the change plan", "hosts": "controllers[0]", "gather_facts": False,
        "tasks": [{
            "name": "the plan names the release and refuses nothing",
            "ansible.builtin.assert": {
                "that": ["cluster_iac_changes is defined", "cluster_iac_release is defined",
                         "cluster_iac_release in _plan.actions",
                         "_plan.actions[cluster_iac_release] | selectattr('refused') | list "
                         "| length == 0"],
                "fail_msg": "pass -e cluster_iac_changes=FILE (cluster-iac changes SPEC -o DIR "
                            "--format json > FILE, before rendering) and -e "
                            "cluster_iac_release=RELEASE; a refused action is applied by hand",
                "quiet": True},
            "vars": {"_plan": "{{ lookup('ansible.builtin.file', cluster_iac_changes) "
                              "| from_json }}"}}]}]
    for group, files in sorted(installs(plan).items()):
        play: dict[str, object] = {
            "name": f"install the rendered files of {group}", "hosts": group,
            "gather_facts": False}
        extra = _play_vars(plan, group)
        if extra:
            play["vars"] = extra
        plays.append({**play, "tasks": _install_tasks(files)})
    rails = _rails_play(plan)
    if rails:
        plays.append(rails)
    plays.append({
        "name": "run the change plan's actions in order", "hosts": "controllers[0]",
        "gather_facts": False,
        "vars": {"cluster_iac_dbd_host": _dbd_host(plan), "cluster_iac_conf_dir": SLURM_CONF_DIR,
                 "cluster_iac_file_hosts": file_hosts(plan)},
        "tasks": [{
            "name": "one action of the plan",
            "ansible.builtin.include_tasks": "actions.yml",
            "loop": "{{ (lookup('ansible.builtin.file', cluster_iac_changes) | from_json)"
                    ".actions[cluster_iac_release] }}",
            "loop_control": {"loop_var": "planned",
                             "label": "{{ planned.kind }} {{ planned.hosts }}"},
        }]})
    return plays


def _rails_play(plan: Plan) -> dict[str, object]:
    """The play that installs each GPU node's RoCE rails as its netplan file and applies it
    where it changed (the module docstring, 3.); empty without a routed RoCE fabric. The
    hosts are the node types' groups; a node without ``roce_rails`` is skipped."""
    rails = plan.rails.get("compute", {})  # compile/plan_host_rails.py
    types = sorted({n.node_type for n in plan.nodes if n.hostname in rails})
    if not types:
        return {}
    content = (f"# {GENERATED_BY}\n"
               "{{ {'network': {'version': 2, 'ethernets': roce_rails}} "
               "| to_nice_yaml(indent=2, sort_keys=False) }}")
    return {
        "name": "the GPU nodes' RoCE rails (netplan)",
        "hosts": ":".join(group_name("type", t) for t in types),
        "gather_facts": False, "tags": ["rails"],
        "tasks": [{
            "name": "the netplan directory",
            "ansible.builtin.file": {"path": f"{ROOT}{posixpath.dirname(RAILS_FILE)}",
                                     "state": "directory", "mode": "0755"},
            "when": "roce_rails is defined"}, {
            "name": "the rails' netplan file",
            "ansible.builtin.copy": {"content": content, "dest": f"{ROOT}{RAILS_FILE}",
                                     "owner": "root", "group": "root", "mode": "0600"},
            "when": "roce_rails is defined", "notify": "netplan apply"}],
        "handlers": [{
            "name": "netplan apply",
            "ansible.builtin.command": {
                "argv": f"{{{{ {_default('cluster_iac_netplan_apply', NETPLAN_APPLY)} }}}}"},
            "environment": {"CLUSTER_IAC_HOST": "{{ inventory_hostname }}"}}]}


def _dbd_host(plan: Plan) -> str:
    acct = plan.scheduling.accounting
    return acct.dbd_host if acct is not None else ""


def _cmd(argv: str, name: str, kind: str, **extra: object) -> dict[str, object]:
    return {"name": name, "ansible.builtin.command": {"argv": argv},
            "when": f"planned.kind == '{kind}'", **extra}


def _default(var: str, argv: list[str]) -> str:
    """The variable, or the real cluster's command when it is not set (a sandbox sets it)."""
    return f"{var} | default({argv!r})"


def _wait_up() -> dict[str, object]:
    return {"name": "slurmctld answers", "ansible.builtin.command": {
        "argv": f"{{{{ {_default('cluster_iac_scontrol', SCONTROL)} + ['ping'] }}}}"},
        "register": "_ping", "until": "' is UP' in _ping.stdout", "retries": 60, "delay": 1,
        "changed_when": False,
        "when": "planned.kind in ['restart-slurmctld', 'reconfigure'] and not ansible_check_mode"}


def _unit_task(kind: str, verb: str, unit: str, service: str) -> dict[str, object]:
    """``systemctl VERB UNIT`` on every host of the action's files: its causes are the files
    (the change plan's), their hosts the inventory patterns of cluster_iac_file_hosts."""
    return _cmd(f"{{{{ {service} + ['{verb}', '{unit}'] }}}}", f"{kind}: {verb} {unit} on the "
                "hosts of its files", kind, delegate_to="{{ item }}",
                loop="{{ query('ansible.builtin.inventory_hostnames', _pattern) "
                     "if _pattern else [] }}",
                vars={"_pattern": "{{ planned.causes | select('in', cluster_iac_file_hosts) "
                                  "| map('extract', cluster_iac_file_hosts) | join(':') }}"},
                environment={"CLUSTER_IAC_HOST": "{{ item }}"})


def actions(plan: Plan) -> list[dict[str, object]]:
    """One action of the change plan (``planned``): the tasks of its kind, nothing else; a
    kind this cluster has no task for (slurmdbd's without accounting) fails the run."""
    service = _default("cluster_iac_service", SERVICE)
    scontrol = _default("cluster_iac_scontrol", SCONTROL)
    nodes = "'nodename=' ~ planned.hosts"
    kinds = ["lustre-rewrite", "drain", "accounting", "restart-slurmctld", "reconfigure",
             "restart-slurmd", "start-slurmd", "resume", "new-jobs", "none", "apply-netplan",
             *UNITS]
    dbd: list[dict[str, object]] = []
    if plan.scheduling.accounting is not None:
        kinds += ["restart-database", "restart-slurmdbd"]
        dbd = [
            _cmd(f"{{{{ {service} + ['restart', 'mariadb'] }}}}", "restart MariaDB",
                 "restart-database", delegate_to="{{ cluster_iac_dbd_host }}",
                 environment={"CLUSTER_IAC_HOST": "{{ cluster_iac_dbd_host }}"}),
            _cmd("{{ ['sh', cluster_iac_conf_dir ~ '/slurmdbd-storage-pass.sh'] }}",
                 "write slurmdbd's StoragePass file", "restart-slurmdbd",
                 delegate_to="{{ cluster_iac_dbd_host }}", no_log=True,
                 environment={"SLURMDBD_STORAGE_PASS": "{{ slurmdbd_storage_pass }}"}) | {
                "when": ["planned.kind == 'restart-slurmdbd'",
                         "planned.commands | select('search', 'slurmdbd-storage-pass') | list "
                         "| length > 0"]},
            _cmd(f"{{{{ {service} + ['restart', 'slurmdbd'] }}}}", "restart slurmdbd",
                 "restart-slurmdbd", delegate_to="{{ cluster_iac_dbd_host }}",
                 environment={"CLUSTER_IAC_HOST": "{{ cluster_iac_dbd_host }}"})]
    return [
        {"name": "an action this playbook knows",
         "ansible.builtin.fail": {"msg": "no task for {{ planned.kind }} on this cluster"},
         "when": f"planned.kind not in {sorted(kinds)}"},
        {"name": "lustre-rewrite: format or rewrite the Lustre targets by hand",
         "ansible.builtin.fail": {"msg": "run lustre/servers/*.sh on their servers (MGS first), "
                                         "then again with -e cluster_iac_lustre_done=true"},
         "when": "planned.kind == 'lustre-rewrite' and not (cluster_iac_lustre_done | "
                 "default(false) | bool)"},
        _cmd(f"{{{{ {scontrol} + ['update', {nodes}, 'state=DRAIN', "
             "'reason=cluster-iac-change'] }}", "drain", "drain"),
        *dbd,
        _cmd("{{ cluster_iac_admin | default([]) + (planned.commands[0].split() if "
             "planned.commands[0].startswith('sacctmgr -i add qos ') else "
             "['sh', cluster_iac_conf_dir ~ '/accounting.sh']) }}",
             "accounting", "accounting"),
        _cmd(f"{{{{ {service} + ['restart', 'slurmctld'] }}}}",
             "restart slurmctld on the controllers", "restart-slurmctld",
             delegate_to="{{ item }}", loop="{{ groups['controllers'] }}",
             environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
        _cmd(f"{{{{ {scontrol} + ['reconfigure'] }}}}", "scontrol reconfigure", "reconfigure"),
        _wait_up(),
        {"name": "the nodes of restart-slurmd or start-slurmd", "ansible.builtin.command": {
            "argv": f"{{{{ {_default('cluster_iac_hostnames', HOSTNAMES)} + [planned.hosts] }}}}"},
         "register": "_nodes", "changed_when": False, "check_mode": False,
         "when": "planned.kind in ['restart-slurmd', 'start-slurmd']"},
        _cmd(f"{{{{ {service} + ['restart', 'slurmd'] }}}}",
             "restart slurmd on its nodes", "restart-slurmd", delegate_to="{{ item }}",
             loop="{{ _nodes.stdout_lines | default([]) }}",
             environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
        _cmd(f"{{{{ {service} + ['enable', '--now', 'slurmd'] }}}}",
             "start slurmd on the nodes the change adds", "start-slurmd",
             delegate_to="{{ item }}", loop="{{ _nodes.stdout_lines | default([]) }}",
             environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
        _cmd(f"{{{{ {scontrol} + ['update', {nodes}, 'state=RESUME'] }}}}",
             "resume", "resume"),
        *(_unit_task(kind, verb, unit, service) for kind, (verb, unit) in UNITS.items()),
        {"name": "apply-netplan: done by the rails play's handler where the file changed",
         "ansible.builtin.debug": {"msg": "netplan apply ran on {{ planned.hosts }} whose "
                                          "rails file changed (the play before this one)"},
         "when": "planned.kind == 'apply-netplan'"},
        {"name": "new-jobs or none: nothing to run",
         "ansible.builtin.debug": {"msg": "{{ planned.why }}"},
         "when": "planned.kind in ['new-jobs', 'none']"},
    ]
