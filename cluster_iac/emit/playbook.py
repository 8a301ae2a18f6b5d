"""ansible/site.yml and ansible/actions.yml: install the rendered files, then run the change plan.

    ansible-playbook -i ansible/inventory.yml ansible/site.yml \\
        -e cluster_iac_changes=changes.json -e cluster_iac_release=22.05

The playbook is data made here and written by the YAML serializer (no template: a spec string
is a quoted scalar, never a task). Its plays, in order:

1. read the change plan (``cluster-iac changes --format json``) for the target release and stop
   before anything is installed when it is missing, names no such release, or refuses an action;
2. one play per inventory group that needs files: each rendered file copied from the tree to the
   path the inventory's variables name (``slurm_conf_dir``, ``nccl_conf_path``,
   ``nccl_topo_file``) or the file's own header names, with its owner and mode; nothing else is
   touched, and a file this cluster does not render (no topology.conf, no accounting) is skipped;
3. the change plan's actions in its order (a first deployment's bring-up order included), one
   include of actions.yml per action, which runs only the tasks of that action's kind.

How daemons are (re)started and how scontrol is reached are variables (``cluster_iac_service``,
``cluster_iac_scontrol``, ``cluster_iac_hostnames``, argv lists) so a test sandbox can stand in
for systemd; ``cluster_iac_root`` prefixes every installed path (empty on a real cluster).
"""

from __future__ import annotations

from cluster_iac.emit.ansible import NCCL_TOPO_DIR, ROLE_GROUPS, SLURM_CONF_DIR, group_name
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.slurmdbd import SLURM_USER
from cluster_iac.emit.structured import yaml_text
from cluster_iac.plan import Plan
from cluster_iac.plan.imex import CONFIG_DIR as IMEX_DIR
from cluster_iac.plan.imex import NODES_FILE

SLURM_FILES = ("slurm.conf", "gres.conf", "cgroup.conf", "topology.conf", "topology.yaml")
# slurm.conf(5): "should be consistent across all nodes": every Slurm host reads the same files
SLURM_GROUPS = ("controllers", "compute", "login")
# Where the slurmdbd files go, as their headers say (templates/slurm/*.j2): slurmdbd.conf
# "beside slurm.conf on the slurmdbd host, owned by SlurmUser, mode 0600" (slurmdbd refuses a
# file others can read: it holds the storage settings); mariadb-slurmdbd.cnf "in
# /etc/mysql/mariadb.conf.d/"; the storage-pass script writes the password file itself.
MARIADB_CNF = "/etc/mysql/mariadb.conf.d/60-slurmdbd.cnf"
# lustre/lnet/<type>.yaml's header: "`lnetctl import < this file` (or /etc/lnet.conf, read by
# the lnet service)"; the IMEX files' places are plan/imex.py's (emit/imex.py's docstring).
LNET_CONF = "/etc/lnet.conf"
ROOT = "{{ cluster_iac_root | default('') }}"
TREE = "{{ playbook_dir }}/.."
SERVICE = ["systemctl"]
SCONTROL = ["scontrol"]
HOSTNAMES = ["scontrol", "show", "hostnames"]


def render(plan: Plan) -> dict[str, str]:
    return {"ansible/site.yml": yaml_text(site(plan), [GENERATED_BY]),
            "ansible/actions.yml": yaml_text(actions(plan), [GENERATED_BY])}


def installs(plan: Plan) -> dict[str, list[dict[str, str]]]:
    """Inventory group -> the files it gets: {src (in the tree), dest, owner, group, mode}."""
    conf_dir = "{{ slurm_conf_dir }}"
    found: dict[str, list[dict[str, str]]] = {}
    slurm = [_file(f"slurm/{name}", f"{conf_dir}/{name}") for name in SLURM_FILES]
    present = {ROLE_GROUPS[d.role] for d in plan.devices if d.kind == "node"}
    for group in SLURM_GROUPS:
        if group in present:
            found[group] = list(slurm)
    acct = plan.scheduling.accounting
    if acct is not None:
        found.setdefault("controllers", []).append(
            _file("slurm/accounting.sh", f"{conf_dir}/accounting.sh", mode="0755"))
        found[_plain(acct.dbd_host)] = [
            _file("slurm/slurmdbd.conf", f"{conf_dir}/slurmdbd.conf", owner=SLURM_USER,
                  mode="0600"),
            _file("slurm/slurmdbd-storage-pass.sh", f"{conf_dir}/slurmdbd-storage-pass.sh",
                  mode="0700"),
            _file("slurm/mariadb-slurmdbd.cnf", MARIADB_CNF)]
    health = plan.scheduling.health
    for node in health.nodes if health is not None else ():
        found.setdefault(group_name("type", node.node_type), []).append(
            _file(f"slurm/healthcheck/{node.node_type}.sh", _plain(health.program),
                  mode="0755"))
    for type_name, env in sorted(plan.nccl.items()):
        type_files = found.setdefault(group_name("type", type_name), [])
        type_files += [_file(f"nccl/{type_name}.nccl.conf", "{{ nccl_conf_path }}"),
                       _file(f"nccl/{type_name}.env", f"{NCCL_TOPO_DIR}/{type_name}.env")]
        if env.topo_file:
            type_files.append(_file(f"nccl/{type_name}.topo.xml", "{{ nccl_topo_file }}"))
    lustre = plan.lustre
    if lustre is not None and lustre.hardware is not None:
        for type_name in sorted(lustre.hardware.lnet.interfaces):
            found.setdefault(group_name("type", type_name), []).append(
                _file(f"lustre/lnet/{type_name}.yaml", LNET_CONF))
    if plan.imex is not None:
        pattern = ":".join(group_name("type", t) for t in plan.imex.node_types)
        found.setdefault(pattern, []).extend([
            _file("imex/config.cfg", f"{IMEX_DIR}/config.cfg"),
            # the node's own domain's file (the play's cluster_iac_imex_domain, from the plan)
            {**_file("imex/_/nodes_config.cfg", NODES_FILE),
             "src": "imex/{{ cluster_iac_imex_domain[inventory_hostname] }}/nodes_config.cfg"}])
    return found


def _play_vars(plan: Plan, group: str) -> dict[str, object]:
    """What a group's install play needs beyond its files: each IMEX node's NVLink domain."""
    if plan.imex is None or group != ":".join(group_name("type", t)
                                              for t in plan.imex.node_types):
        return {}
    return {"cluster_iac_imex_domain": {_plain(node): _plain(domain.name)
                                        for domain in plan.imex.domains
                                        for node in domain.nodes}}


def _file(src: str, dest: str, owner: str = "root", mode: str = "0644") -> dict[str, str]:
    return {"src": _plain(src), "dest": dest, "owner": owner, "group": owner, "mode": mode}


def _plain(text: str) -> str:
    """A name from the spec, checked to hold no Jinja delimiter: Ansible templates every
    string of a task, so such a name would run as code. The spec's name patterns already
    refuse braces (spec/base.py Name, spec/scheduling.py AbsolutePath, HostName)."""
    if "{" in text or "}" in text:
        raise ValueError(f"{text!r} would be read by Ansible as a template")
    return text


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
        plays.append({**play, "tasks": [{
                "name": "the directories",
                "ansible.builtin.file": {"path": f"{ROOT}{{{{ item.dest | dirname }}}}",
                                         "state": "directory", "mode": "0755"},
                "loop": files, "loop_control": {"label": "{{ item.dest | dirname }}"},
                "when": "(playbook_dir ~ '/../' ~ item.src) is file"}, {
                "name": "the files",
                "ansible.builtin.copy": {
                    "src": f"{TREE}/{{{{ item.src }}}}", "dest": f"{ROOT}{{{{ item.dest }}}}",
                    "owner": "{{ item.owner }}", "group": "{{ item.group }}",
                    "mode": "{{ item.mode }}"},
                "loop": files, "loop_control": {"label": "{{ item.src }} -> {{ item.dest }}"},
                "when": "(playbook_dir ~ '/../' ~ item.src) is file"}]})
    plays.append({
        "name": "run the change plan's actions in order", "hosts": "controllers[0]",
        "gather_facts": False,
        "vars": {"cluster_iac_dbd_host": _dbd_host(plan), "cluster_iac_conf_dir": SLURM_CONF_DIR},
        "tasks": [{
            "name": "one action of the plan",
            "ansible.builtin.include_tasks": "actions.yml",
            "loop": "{{ (lookup('ansible.builtin.file', cluster_iac_changes) | from_json)"
                    ".actions[cluster_iac_release] }}",
            "loop_control": {"loop_var": "planned",
                             "label": "{{ planned.kind }} {{ planned.hosts }}"},
        }]})
    return plays


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


def actions(plan: Plan) -> list[dict[str, object]]:
    """One action of the change plan (``planned``): the tasks of its kind, nothing else; a
    kind this cluster has no task for (slurmdbd's without accounting) fails the run."""
    service = _default("cluster_iac_service", SERVICE)
    scontrol = _default("cluster_iac_scontrol", SCONTROL)
    nodes = "'nodename=' ~ planned.hosts"
    kinds = ["lustre-rewrite", "drain", "accounting", "restart-slurmctld", "reconfigure",
             "restart-slurmd", "resume", "new-jobs", "none"]
    dbd: list[dict[str, object]] = []
    if plan.scheduling.accounting is not None:
        kinds += ["restart-database", "restart-slurmdbd"]
        dbd = [
            _cmd(f"{{{{ {service} + ['restart', 'mariadb'] }}}}", "restart MariaDB",
                 "restart-database", delegate_to="{{ cluster_iac_dbd_host }}"),
            _cmd("{{ ['sh', cluster_iac_conf_dir ~ '/slurmdbd-storage-pass.sh'] }}",
                 "write slurmdbd's StoragePass file", "restart-slurmdbd",
                 delegate_to="{{ cluster_iac_dbd_host }}", no_log=True,
                 environment={"SLURMDBD_STORAGE_PASS": "{{ slurmdbd_storage_pass }}"}) | {
                "when": ["planned.kind == 'restart-slurmdbd'",
                         "planned.commands | select('search', 'slurmdbd-storage-pass') | list"]},
            _cmd(f"{{{{ {service} + ['restart', 'slurmdbd'] }}}}", "restart slurmdbd",
                 "restart-slurmdbd", delegate_to="{{ cluster_iac_dbd_host }}")]
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
        _cmd("{{ planned.commands[0].split() if planned.commands[0].startswith('sacctmgr -i add "
             "qos ') else ['sh', cluster_iac_conf_dir ~ '/accounting.sh'] }}",
             "accounting", "accounting"),
        _cmd(f"{{{{ {service} + ['restart', 'slurmctld'] }}}}",
             "restart slurmctld on the controllers", "restart-slurmctld",
             delegate_to="{{ item }}", loop="{{ groups['controllers'] }}",
             environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
        _cmd(f"{{{{ {scontrol} + ['reconfigure'] }}}}", "scontrol reconfigure", "reconfigure"),
        _wait_up(),
        {"name": "the nodes of restart-slurmd", "ansible.builtin.command": {
            "argv": f"{{{{ {_default('cluster_iac_hostnames', HOSTNAMES)} + [planned.hosts] }}}}"},
         "register": "_nodes", "changed_when": False, "check_mode": False,
         "when": "planned.kind == 'restart-slurmd'"},
        _cmd(f"{{{{ {service} + ['restart', 'slurmd'] }}}}",
             "restart slurmd on its nodes", "restart-slurmd", delegate_to="{{ item }}",
             loop="{{ _nodes.stdout_lines | default([]) }}",
             environment={"CLUSTER_IAC_HOST": "{{ item }}"}),
        _cmd(f"{{{{ {scontrol} + ['update', {nodes}, 'state=RESUME'] }}}}",
             "resume", "resume"),
        {"name": "new-jobs or none: nothing to run",
         "ansible.builtin.debug": {"msg": "{{ planned.why }}"},
         "when": "planned.kind in ['new-jobs', 'none']"},
    ]
