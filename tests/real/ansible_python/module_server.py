"""A fork server for the sandbox's Ansible module runs (started by
tests/real/playbook_harness.run_playbook for one ansible-playbook run; its client is
module_client.py, the sandbox's ``ansible_python_interpreter``).

Each module run is a new Python that unpacks the AnsiballZ zip and imports
ansible.module_utils.basic and the ~120 modules under it before the module does anything: about
0.2 s of CPU per run on the 2-core CI machine, four fifths of a playbook run's CPU (a file
installed is two runs: stat, then copy or file). This server imports them once, from the same
ansible-core the controller built the zip from (the zip's module_utils are copies of these
files), and forks a child per run: the child takes the client's stdin, stdout, stderr, working
directory, umask, environment and arguments, runs the AnsiballZ wrapper read from stdin as
``python -`` would (the wrapper still opens its zip and runs the module by runpy with its
parameters; the ``ansible`` package being imported already, the module and its module_utils are
read from the installed ansible-core, of which the zip's files are copies), runs the exit
handlers the module registered (AnsibleModule's temporary directory) and sends its exit status
back, then ends as a forked child does (os._exit: no interpreter teardown, so a file object a
module left open and unflushed would lose its buffer; the builtin modules close theirs, and its
collector is off, as in ansible-playbook's workers: sitecustomize.py). A transport choice like
pipelining: what the module does to the host does not change, only that the interpreter it runs
in was started before.

Protocol on the Unix socket (SOCK_SEQPACKET: one message is one request): the client sends one
marshal-ed dict (argv, cwd, umask, env) with its file descriptors 0, 1, 2 (SCM_RIGHTS); the
child answers the exit status as decimal text.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import signal
import socket
import sys
import traceback
import types
from typing import Any

# what every module run imports first (the wrapper's loader, then AnsibleModule and the module
# utilities the builtin modules of the playbook use)
PRELOAD = ("ansible.module_utils._internal._ansiballz._loader", "ansible.module_utils.basic",
           "ansible.module_utils.common.text.converters", "ansible.module_utils.common.locale",
           "ansible.module_utils.common.process", "ansible.module_utils.six")


def _exit_status(exc: SystemExit) -> int:
    """What the interpreter would exit with for ``sys.exit(code)``."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _run(request: dict[str, Any]) -> int:
    """The child: the client's process state, then its script from stdin, as ``python -``."""
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-", *request["argv"]]
    main = types.ModuleType("__main__")
    main.__dict__["__builtins__"] = __builtins__
    sys.modules["__main__"] = main
    source = sys.stdin.buffer.read()
    try:
        exec(compile(source, "<stdin>", "exec"), main.__dict__)  # noqa: S102
        status = 0
    except SystemExit as exc:
        status = _exit_status(exc)
    except BaseException:  # noqa: BLE001 (what an uncaught exception does to the interpreter)
        traceback.print_exc()
        status = 1
    atexit._run_exitfuncs()  # type: ignore[attr-defined]
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    return status


def _child(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """The forked child: the client's descriptors as its own 0, 1, 2, the run, its status."""
    for fd, target in zip(fds, (0, 1, 2), strict=True):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdin = os.fdopen(0, "r", closefd=False)
    status = 1
    try:
        status = _run(request)
    finally:
        try:
            conn.sendall(str(status).encode())
        finally:
            os._exit(status)


def _reap(block: bool) -> None:
    """Wait for the children that ended (all of them with ``block``): a waited-for child's
    CPU time is counted in the server's, so in the test's (auto-reaped ones are not)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _stop(signum: int, frame: object) -> None:
    raise SystemExit(0)


def serve(path: str) -> None:
    """Listen on ``path`` until terminated, a forked child per connection."""
    for name in PRELOAD:  # a preload only: a release that moved one imports it per run
        with contextlib.suppress(ImportError):
            __import__(name)
    signal.signal(signal.SIGTERM, _stop)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(path)
    listener.listen(64)
    print("ready", flush=True)
    try:
        while True:
            _reap(block=False)
            conn, _ = listener.accept()
            message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                listener.close()
                _child(conn, marshal.loads(message), fds)
            for fd in fds:
                os.close(fd)
            conn.close()
    finally:
        _reap(block=True)


if __name__ == "__main__":
    serve(sys.argv[1])
