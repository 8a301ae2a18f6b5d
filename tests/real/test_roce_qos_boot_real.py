"""The hosts' RoCE QoS at boot: the rendered systemd unit (qos/cluster-iac-roce-qos.service,
emit/qos.py) read by real systemd tools, and installed and enabled by the real playbook.

- ``dash -n`` (Debian's /bin/sh) parses the script of a RoCE compute node and of a Lustre
  server of the SuperPOD, whose RoCE ports are its storage fabric's;
- ``systemd-analyze verify`` loads the unit beside the script it runs, in a root of the test's
  holding the system's own targets (copied from /usr/lib/systemd/system): no error, and a unit
  broken on purpose (its script not executable) is refused, so the check can fail;
- ``systemctl --root enable`` links it into the wants of multi-user.target and
  network-online.target, the boot targets its [Install] names;
- ansible-playbook runs site.yml for one RoCE node of examples/spectrum-x-roce.yaml: the script
  and the unit land where the unit says, then the playbook asks systemd to reload and to
  ``enable --now`` the unit. The sandbox's service manager (tests/real/playbook_harness.py)
  carries out the enable with the real ``systemctl --root=<the host's root> enable`` and logs
  the start (no RoCE NIC here to run the script on); a second run changes nothing.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from cluster_iac.emit.qos import SCRIPT_DEST, UNIT_DEST, UNIT_NAME, UNIT_PATH
from tests.conftest import example_build
from tests.real.netns import tool
from tests.real.playbook_harness import RequestServer, extra_vars, recap, run_playbook
from tests.real.test_playbook_real import _example_tree, _inventory

pytestmark = pytest.mark.real

EXAMPLE = "spectrum-x-roce"
SYSTEM_UNITS = Path("/usr/lib/systemd/system")


def _root(tmp_path: Path, unit: str, script: str) -> Path:
    """A host root: the system's targets and services (regular files), the unit and its script
    at their installed paths."""
    root = tmp_path / "root"
    system = root / SYSTEM_UNITS.relative_to("/")
    system.mkdir(parents=True)
    for path in SYSTEM_UNITS.iterdir():
        if path.is_file() and not path.is_symlink():
            shutil.copy(path, system / path.name)
    for dest, text, mode in ((UNIT_DEST, unit, 0o644), (SCRIPT_DEST, script, 0o755)):
        target = root / dest.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(mode)
    return root


def _verify(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([tool("systemd-analyze"), "verify", f"--root={root}", UNIT_DEST],
                          capture_output=True, text=True, timeout=60)


# (example, node type): the RoCE compute fabric's hosts; the SuperPOD's Lustre servers, whose
# only RoCE ports are on its Ethernet storage fabric
SCRIPTS = [(EXAMPLE, "h200"), ("dgx-h100-superpod-4su", "lustre")]


@pytest.mark.parametrize(("example", "node_type"), SCRIPTS)
def test_systemd_verifies_the_unit_and_enables_it_at_boot(tmp_path: Path, example: str,
                                                          node_type: str) -> None:
    files = example_build(example).files
    script = files[f"qos/{node_type}.roce-host.sh"]
    # the shell that runs it at boot parses it (dash, Debian's /bin/sh)
    parsed = subprocess.run([tool("dash"), "-n"], input=script, capture_output=True,
                            text=True, timeout=60)
    assert parsed.returncode == 0, parsed.stderr
    root = _root(tmp_path, files[UNIT_PATH], script)
    checked = _verify(root)
    assert checked.returncode == 0, checked.stderr
    assert UNIT_NAME not in checked.stderr, checked.stderr  # no warning about it either
    # the check can fail: the script it runs not executable
    (root / SCRIPT_DEST.lstrip("/")).chmod(0o644)
    broken = _verify(root)
    assert broken.returncode != 0 and "is not executable" in broken.stderr, broken.stderr
    (root / SCRIPT_DEST.lstrip("/")).chmod(0o755)
    enabled = subprocess.run([tool("systemctl"), f"--root={root}", "enable", UNIT_NAME],
                             capture_output=True, text=True, timeout=60)
    assert enabled.returncode == 0, enabled.stderr
    for target in ("multi-user.target", "network-online.target"):
        link = root / "etc/systemd/system" / f"{target}.wants" / UNIT_NAME
        assert link.is_symlink() and os.readlink(link) == UNIT_DEST, target


class _Systemd(RequestServer):
    """The sandbox hosts' systemd: ``enable`` done by the real systemctl on the host's root,
    ``--now`` and ``daemon-reload`` logged (nothing here to start)."""

    def handle(self, argv: list[str], host: str) -> tuple[int, str]:
        self.log.append((*argv, host))
        if argv[:1] != ["enable"]:
            return 0, ""
        done = subprocess.run([tool("systemctl"), f"--root={self.roots / host}", "enable",
                               argv[-1]], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout + done.stderr


def test_the_playbook_installs_the_script_and_enables_its_unit(tmp_path: Path) -> None:
    tree, plan, release, _, roots = _example_tree(EXAMPLE, tmp_path)
    node = next(iter(_inventory(tree)["all"]["children"]["type_h200"]["hosts"]))
    systemd = _Systemd(tmp_path / "requests", roots)
    sandbox = extra_vars(tmp_path, systemd)
    with systemd:
        first = run_playbook(tree, plan, release, sandbox, tmp_path, "--limit", node)
        assert first.returncode == 0, first.stdout[-6000:] + first.stderr
        host = roots / node
        unit = host / UNIT_DEST.lstrip("/")
        assert unit.read_text() == (tree / UNIT_PATH).read_text()
        script = host / SCRIPT_DEST.lstrip("/")
        assert script.read_text() == (tree / "qos/h200.roce-host.sh").read_text()
        assert stat.S_IMODE(script.stat().st_mode) == 0o755
        assert systemd.log == [("daemon-reload", node), ("enable", "--now", UNIT_NAME, node)]
        wants = host / "etc/systemd/system/multi-user.target.wants" / UNIT_NAME
        assert wants.is_symlink() and os.readlink(wants) == UNIT_DEST
        assert recap(first.stdout)[node]["changed"] > 0
        again = run_playbook(tree, plan, release, sandbox, tmp_path, "--limit", node)
    assert again.returncode == 0, again.stdout[-6000:] + again.stderr
    assert recap(again.stdout)[node]["changed"] == 0, again.stdout[-6000:]
