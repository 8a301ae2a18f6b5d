"""ansible/actions/<kind>.yml: the tasks of one kind of the change plan's actions.

ansible/site.yml's last play includes one of these files per planned action
(``include_tasks: actions/{{ planned.kind }}.yml``, ``planned`` the action), so an action runs
only its own kind's tasks: none of them is skipped for being of another kind (one file of all
the kinds' tasks, each with ``when: planned.kind == ...``, ran about twenty skipped tasks per
action, ~0.6 s of Ansible's CPU each on head1).

Every kind of catalog/slurm_actions.py ``KINDS`` has its file but ``NOTHING_TO_RUN``'s: those
kinds run nothing, and the include skips them by its own ``when`` (an included file of no
task would still be read and reported for each of them). A kind this cluster has no task for
(slurmdbd's without accounting; ``reload-frr``: the switches are not hosts of this playbook)
gets a file whose one task fails the run there, as the one file's did. The data is made here
and written by the YAML serializer (emit/playbook.py ``render``).
"""

from __future__ import annotations

from collections.abc import Mapping

from cluster_iac.catalog.slurm_actions import KINDS
from cluster_iac.plan import Plan

SERVICE = ["systemctl"]
SCONTROL = ["scontrol"]
HOSTNAMES = ["scontrol", "show", "hostnames"]
ACTIONS_DIR = "actions"  # beside site.yml, which includes its files by this relative path
NETPLAN_APPLY = ["netplan", "apply"]
# netplan(5): files in /etc/netplan are read in lexical order, a later one overriding an
# earlier one's keys; cloud-init writes 50-cloud-init.yaml, so 60- comes after it
RAILS_FILE = "/etc/netplan/60-cluster-iac-rails.yaml"
NOTHING_TO_RUN = ("new-jobs", "none")
"""Kinds with nothing to run (jobs started after the change read it; a file no program
reads): the include skips them, no file is made for them."""
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

Task = dict[str, object]


def action_path(kind: str) -> str:
    """A kind's file in the rendered tree."""
    return f"ansible/{ACTIONS_DIR}/{kind}.yml"


def default(var: str, argv: list[str]) -> str:
    """The variable, or the real cluster's command when it is not set (a sandbox sets it)."""
    return f"{var} | default({argv!r})"


def _cmd(argv: str, name: str, **extra: object) -> Task:
    return {"name": name, "ansible.builtin.command": {"argv": argv}, **extra}


def _wait_up() -> Task:
    """After slurmctld's restart or a reconfigure: the next action talks to slurmctld."""
    return {"name": "slurmctld answers", "ansible.builtin.command": {
        "argv": f"{{{{ {default('cluster_iac_scontrol', SCONTROL)} + ['ping'] }}}}"},
        "register": "_ping", "until": "' is UP' in _ping.stdout", "retries": 60, "delay": 1,
        "changed_when": False, "when": "not ansible_check_mode"}


def _nodes(kinds: str = "restart-slurmd or start-slurmd") -> Task:
    """The action's hostlist expanded by scontrol (run in check mode too: a query)."""
    return {"name": f"the nodes of {kinds}", "ansible.builtin.command": {
        "argv": f"{{{{ {default('cluster_iac_hostnames', HOSTNAMES)} + [planned.hosts] }}}}"},
        "register": "_nodes", "changed_when": False, "check_mode": False}


def _unit_task(kind: str, verb: str, unit: str, service: str) -> Task:
    """``systemctl VERB UNIT`` on every host of the action's files: its causes are the files
    (the change plan's), their hosts the inventory patterns of cluster_iac_file_hosts."""
    return _cmd(f"{{{{ {service} + ['{verb}', '{unit}'] }}}}",
                f"{kind}: {verb} {unit} on the hosts of its files", delegate_to="{{ item }}",
                loop="{{ query('ansible.builtin.inventory_hostnames', _pattern) "
                     "if _pattern else [] }}",
                vars={"_pattern": "{{ planned.causes | select('in', cluster_iac_file_hosts) "
                                  "| map('extract', cluster_iac_file_hosts) | join(':') }}"},
                environment={"CLUSTER_IAC_HOST": "{{ item }}"})


def _on_dbd(argv: str, name: str, **extra: object) -> Task:
    return _cmd(argv, name, delegate_to="{{ cluster_iac_dbd_host }}",
                environment={"CLUSTER_IAC_HOST": "{{ cluster_iac_dbd_host }}"}, **extra)


def _accounting(service: str) -> dict[str, list[Task]]:
    """MariaDB's and slurmdbd's restarts on slurmdbd's host (the play's
    ``cluster_iac_dbd_host``); StoragePass written first when the action's commands say so."""
    return {
        "restart-database": [_on_dbd(f"{{{{ {service} + ['restart', 'mariadb'] }}}}",
                                     "restart MariaDB")],
        "restart-slurmdbd": [
            _cmd("{{ ['sh', cluster_iac_conf_dir ~ '/slurmdbd-storage-pass.sh'] }}",
                 "write slurmdbd's StoragePass file", delegate_to="{{ cluster_iac_dbd_host }}",
                 no_log=True,
                 environment={"SLURMDBD_STORAGE_PASS": "{{ slurmdbd_storage_pass }}"},
                 when="planned.commands | select('search', 'slurmdbd-storage-pass') | list "
                      "| length > 0"),
            _on_dbd(f"{{{{ {service} + ['restart', 'slurmdbd'] }}}}", "restart slurmdbd")]}


def _tasks(plan: Plan) -> dict[str, list[Task]]:
    """Kind -> its tasks on this cluster (the kinds it has tasks for)."""
    service = default("cluster_iac_service", SERVICE)
    scontrol = default("cluster_iac_scontrol", SCONTROL)
    nodes = "'nodename=' ~ planned.hosts"
    on_nodes = {"delegate_to": "{{ item }}", "loop": "{{ _nodes.stdout_lines | default([]) }}",
                "environment": {"CLUSTER_IAC_HOST": "{{ item }}"}}
    found: dict[str, list[Task]] = {
        "lustre-rewrite": [{
            "name": "lustre-rewrite: format or rewrite the Lustre targets by hand",
            "ansible.builtin.fail": {"msg": "run lustre/servers/*.sh on their servers (MGS "
                                            "first), then again with -e "
                                            "cluster_iac_lustre_done=true"},
            "when": "not (cluster_iac_lustre_done | default(false) | bool)"}],
        "drain": [_cmd(f"{{{{ {scontrol} + ['update', {nodes}, 'state=DRAIN', "
                       "'reason=cluster-iac-change'] }}", "drain")],
        "accounting": [_cmd("{{ cluster_iac_admin | default([]) + (planned.commands[0].split() "
                            "if planned.commands[0].startswith('sacctmgr -i add qos ') else "
                            "['sh', cluster_iac_conf_dir ~ '/accounting.sh']) }}",
                            "accounting")],
        "restart-slurmctld": [
            _cmd(f"{{{{ {service} + ['restart', 'slurmctld'] }}}}",
                 "restart slurmctld on the controllers", delegate_to="{{ item }}",
                 loop="{{ groups['controllers'] }}",
                 environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
            _wait_up()],
        "reconfigure": [_cmd(f"{{{{ {scontrol} + ['reconfigure'] }}}}", "scontrol reconfigure"),
                        _wait_up()],
        "restart-slurmd": [_nodes(), _cmd(f"{{{{ {service} + ['restart', 'slurmd'] }}}}",
                                          "restart slurmd on its nodes", **on_nodes)],
        "start-slurmd": [_nodes(), _cmd(f"{{{{ {service} + ['enable', '--now', 'slurmd'] }}}}",
                                        "start slurmd on the nodes the change adds",
                                        **on_nodes)],
        "resume": [_cmd(f"{{{{ {scontrol} + ['update', {nodes}, 'state=RESUME'] }}}}",
                        "resume")],
        **{kind: [_unit_task(kind, verb, unit, service)] for kind, (verb, unit) in UNITS.items()},
        "apply-netplan": _apply_netplan(on_nodes)}
    if plan.scheduling.accounting is not None:
        found |= _accounting(service)
    return found


def _apply_netplan(on_nodes: Mapping[str, object]) -> list[Task]:
    """apply-netplan, after ``drain`` (catalog/slurm_actions.py KINDS): on each node it names,
    the rails file removed where the node has no ``roce_rails`` any more (it left the routed
    fabric; the rails play installed the others' files), then ``netplan apply``. The file's
    path is the node's own (``hostvars[item]``: a delegated task's variables are the
    controller's)."""
    root = "{{ hostvars[item].cluster_iac_root | default('') }}"
    return [_nodes("apply-netplan"), {
        "name": "apply-netplan: the rails file of a node that left the routed fabric",
        "ansible.builtin.file": {"path": f"{root}{RAILS_FILE}", "state": "absent"},
        "delegate_to": "{{ item }}", "loop": on_nodes["loop"],
        "when": "hostvars[item].roce_rails is not defined"},
        _cmd(f"{{{{ {default('cluster_iac_netplan_apply', NETPLAN_APPLY)} }}}}",
             "apply-netplan: netplan apply on its drained nodes", **on_nodes)]


def actions(plan: Plan) -> dict[str, list[Task]]:
    """Kind -> the tasks of its file, for every kind of ``KINDS`` but ``NOTHING_TO_RUN``, in
    ``KINDS``'s order; a kind with no task on this cluster fails the run where it comes."""
    tasks = _tasks(plan)
    unknown: list[Task] = [{"name": "an action this playbook knows",
                            "ansible.builtin.fail": {
                                "msg": "no task for {{ planned.kind }} on this cluster"}}]
    return {kind: tasks.get(kind, unknown) for kind in KINDS if kind not in NOTHING_TO_RUN}
