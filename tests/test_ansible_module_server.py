"""The fork server of the sandbox's Ansible module runs (tests/real/ansible_python/
module_server.py and module_client.py, started by tests/real/playbook_harness.module_server):
a script read from stdin through the client runs as ``python -`` runs it (output, exit status,
working directory, umask, environment, exit handlers, its own child processes), in the
server's child, where ansible.module_utils is already imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.real.playbook_harness import module_server

PROBE = """\
import atexit, os, subprocess, sys
atexit.register(lambda: print("exit handler", flush=True))
print(os.getcwd(), oct(os.umask(0o22)), os.environ["PROBE"], sys.argv, __name__)
print("child", subprocess.run(["sh", "-c", "exit 3"]).returncode)
sys.stderr.write("to stderr\\n")
if os.environ["HOW"] == "raise":
    raise ValueError("unhandled")
sys.exit(int(os.environ["HOW"]))
"""
PRELOADED = 'import sys\nprint("ansible.module_utils.basic" in sys.modules)\n'


@pytest.fixture
def server(tmp_path: Path) -> object:
    try:
        import ansible  # noqa: F401  (the server imports its module_utils)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("ansible-core is missing: install '.[test]'")
        pytest.skip("ansible-core is not installed")
    env = dict(os.environ)
    with module_server(env, tmp_path) as interpreter:
        yield interpreter, env


def _run(argv: list[str], source: str, cwd: Path, env: dict[str, str], how: str
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, input=source, capture_output=True, text=True, cwd=cwd,
                          env={**env, "PROBE": "value", "HOW": how}, timeout=60,
                          preexec_fn=lambda: os.umask(0o27))


@pytest.mark.parametrize("how", ["0", "5", "raise"])
def test_a_script_runs_as_python_reading_stdin_runs_it(
        server: tuple[Path, dict[str, str]], tmp_path: Path, how: str) -> None:
    interpreter, env = server
    served = _run([str(interpreter)], PROBE, tmp_path, env, how)
    plain = _run([sys.executable, "-"], PROBE, tmp_path, env, how)
    assert served.returncode == plain.returncode == (1 if how == "raise" else int(how))
    assert served.stdout == plain.stdout == (
        f"{tmp_path} 0o27 value ['-'] __main__\nchild 3\nexit handler\n")
    if how == "raise":  # the traceback names this script's line in both
        assert served.stderr.endswith("ValueError: unhandled\n"), served.stderr
        assert plain.stderr.endswith("ValueError: unhandled\n"), plain.stderr
    else:
        assert served.stderr == plain.stderr == "to stderr\n"


def test_the_script_runs_in_the_servers_child_or_without_one_in_a_python_of_its_own(
        server: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    interpreter, env = server
    served = _run([str(interpreter)], PRELOADED, tmp_path, env, "0")
    assert served.stdout == "True\n", served.stderr  # the server had imported it
    gone = {**env, "CLUSTER_IAC_MODULE_SERVER": str(tmp_path / "no-socket")}
    alone = _run([str(interpreter)], PRELOADED, tmp_path, gone, "0")
    assert (alone.returncode, alone.stdout) == (0, "False\n"), alone.stderr
    script = tmp_path / "script.py"  # a script's path: never the server's stdin protocol
    script.write_text(PRELOADED)
    direct = _run([str(interpreter), str(script)], "", tmp_path, env, "0")
    assert (direct.returncode, direct.stdout) == (0, "False\n"), direct.stderr
