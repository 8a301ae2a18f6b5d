"""The sandbox's ``ansible_python_interpreter`` when a module server runs (module_server.py):
hands this process's stdin, stdout, stderr, working directory, umask, environment and
arguments to the server, which runs the module in a child of its own, and exits with the
child's status. Only a pipelined run (``python`` reading the module from stdin, no argument)
goes to the server. Otherwise (arguments, or CLUSTER_IAC_MODULE_SERVER unset or not answering)
it becomes the interpreter itself (CLUSTER_IAC_MODULE_PYTHON), so the module still runs.

It starts once per module run, so it stays small: run as ``python -I -S`` (no site), it
imports only modules built into the interpreter or already loaded at startup (_socket, not
socket: that one imports enum and selectors; marshal, not json: that one imports re), about
half the CPU of a start with those.
"""

from __future__ import annotations

import _socket
import array
import marshal
import os
import sys

SERVER = "CLUSTER_IAC_MODULE_SERVER"
PYTHON = "CLUSTER_IAC_MODULE_PYTHON"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv: list[str]) -> int:
    """Run the module through the server; the interpreter itself when none answers."""
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET)
    try:
        if argv:  # a script's path or options: not the pipelined ``python -`` the server runs
            raise OSError
        conn.connect(os.environ.get(SERVER, ""))
    except OSError:
        conn.close()
        python = os.environ[PYTHON]
        os.execv(python, [python, *argv])
    request = {"argv": argv, "cwd": os.getcwd(), "umask": _umask(), "env": dict(os.environ)}
    conn.sendmsg([marshal.dumps(request)],
                 [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    answer = conn.recv(64)
    return int(answer) if answer.strip().isdigit() else 1  # no answer: the child died


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
