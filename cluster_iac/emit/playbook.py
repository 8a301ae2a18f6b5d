"""ansible/site.yml and ansible/actions/*.yml: install the rendered files, then run the change plan.

    ansible-playbook -i ansible/inventory.yml ansible/site.yml \\
        -e cluster_iac_changes=changes.json -e cluster_iac_release=22.05

The playbook is data made here and written by the YAML serializer (no template: a spec string
is a quoted scalar, never a task). Its plays, in order:

1. read the change plan (``cluster-iac changes --format json``) for the target release and stop
   before anything is installed when it is missing, names no such release, refuses an action,
   or names an action kind that is not catalog/slurm_actions.py's (a plan of another release
   of cluster-iac: its kind would name a file that is not there);
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
   ``version``) from the inventory's data. It applies nothing: ``netplan apply`` re-creates
   the rails' addresses under the node's running jobs, so it is the change plan's
   ``apply-netplan`` action (4.), after the nodes are drained; a file this play changes that
   the plan does not name (a hand edit put back) is reported by a handler, to apply drained.
   The node's cloud-init network-config holds the same entries, but nothing delivers it
   (NoCloud over HTTP does not read network-config, docs/boot.md);
4. the change plan's actions in its order (a first deployment's bring-up order included), one
   include per action of its kind's file, ``actions/{{ planned.kind }}.yml`` (Ansible templates
   the file name per loop item; emit/playbook_actions.py makes the files), which holds that
   kind's tasks and nothing else (``apply-netplan`` between ``drain`` and ``resume``: on each
   node it names, the rails file removed where the node has no ``roce_rails`` any more, then
   ``netplan apply``); the kinds with nothing to run (``new-jobs``, ``none``) are
   skipped by the include's own ``when`` and have no file. A service's restart (opensm, lnet,
   nvidia-imex, the exporters, Prometheus) runs on the hosts its changed files are installed
   on (the action's causes are the files).

How daemons are (re)started and how scontrol is reached are variables (``cluster_iac_service``,
``cluster_iac_scontrol``, ``cluster_iac_hostnames``, argv lists; ``cluster_iac_admin``, a prefix
of the accounting commands, empty by default; ``cluster_iac_netplan_apply``, the
apply-netplan action's argv, ``netplan apply`` by default) so a test sandbox can stand in for
systemd and netplan; ``cluster_iac_root`` prefixes every installed path (empty on a real
cluster). Which rendered file goes where is emit/playbook_files.py's table.
"""

from __future__ import annotations

import posixpath

from cluster_iac.catalog.slurm_actions import KINDS
from cluster_iac.emit.ansible import SLURM_CONF_DIR, group_name
from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.emit.playbook_actions import (
    ACTIONS_DIR,
    NOTHING_TO_RUN,
    RAILS_FILE,
    SERVICE,
    action_path,
    actions,
    default,
)
from cluster_iac.emit.playbook_files import file_hosts, imex_pattern, installs, plain
from cluster_iac.formats.yaml import yaml_text
from cluster_iac.plan import Plan

ROOT = "{{ cluster_iac_root | default('') }}"
TREE = "{{ playbook_dir }}/.."


def render(plan: Plan) -> dict[str, str]:
    return {"ansible/site.yml": yaml_text(site(plan), [GENERATED_BY]),
            **{action_path(kind): yaml_text(tasks, [GENERATED_BY])
               for kind, tasks in actions(plan).items()}}


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
    service = default("cluster_iac_service", SERVICE)
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
                         "| length == 0",
                         "_plan.actions[cluster_iac_release] | map(attribute='kind') "
                         "| reject('in', _kinds) | list | length == 0"],
                "fail_msg": "pass -e cluster_iac_changes=FILE (cluster-iac changes SPEC -o DIR "
                            "--format json > FILE, before rendering) and -e "
                            "cluster_iac_release=RELEASE; a refused action is applied by hand; "
                            "an action of a kind this playbook does not know comes from "
                            "another release of cluster-iac than the rendered tree's",
                "quiet": True},
            "vars": {"_plan": "{{ lookup('ansible.builtin.file', cluster_iac_changes) "
                              "| from_json }}",
                     "_kinds": list(KINDS)}}]}]
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
            "ansible.builtin.include_tasks": f"{ACTIONS_DIR}/{{{{ planned.kind }}}}.yml",
            "loop": "{{ (lookup('ansible.builtin.file', cluster_iac_changes) | from_json)"
                    ".actions[cluster_iac_release] }}",
            "loop_control": {"loop_var": "planned",
                             "label": "{{ planned.kind }} {{ planned.hosts }}"},
            "when": f"planned.kind not in {list(NOTHING_TO_RUN)!r}",
        }]})
    return plays


def _rails_play(plan: Plan) -> dict[str, object]:
    """The play that installs each GPU node's RoCE rails as its netplan file, applying
    nothing (the module docstring, 3.); empty without a routed RoCE fabric. The hosts are
    the node types' groups; a node without ``roce_rails`` is skipped."""
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
            "when": "roce_rails is defined", "notify": "the rails are applied drained"}],
        "handlers": [{
            "name": "the rails are applied drained",
            "ansible.builtin.debug": {
                "msg": "the rails file changed: the change plan's apply-netplan action "
                       "applies it once the node is drained; a change the plan does not "
                       "name (a hand edit put back) is applied by hand: scontrol update "
                       "nodename={{ inventory_hostname }} state=DRAIN, then netplan apply, "
                       "then state=RESUME"}}]}


def _dbd_host(plan: Plan) -> str:
    acct = plan.scheduling.accounting
    return acct.dbd_host if acct is not None else ""
