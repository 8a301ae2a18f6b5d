"""The sandbox's ``ansible_python_interpreter`` when a module server runs (module_server.py):
hands this process's stdin, stdout, stderr, working directory, umask, environment and
arguments to the server, which runs the module in a child of its own, and exits with the
child's status. Only a pipelined run (``python`` reading the module from stdin, no argument)
goes to the server. Run as ``python -I`` (no site, no user paths: nothing but the standard
library to start). Otherwise (arguments, or CLUSTER_IAC_MODULE_SERVER unset or not answering) it
becomes the interpreter itself (CLUSTER_IAC_MODULE_PYTHON), so the module still runs."""

from __future__ import annotations

import json
import os
import socket
import sys

SERVER = "CLUSTER_IAC_MODULE_SERVER"
PYTHON = "CLUSTER_IAC_MODULE_PYTHON"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv: list[str]) -> int:
    """Run the module through the server; the interpreter itself when none answers."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        if argv:  # a script's path or options: not the pipelined ``python -`` the server runs
            raise OSError
        conn.connect(os.environ.get(SERVER, ""))
    except OSError:
        conn.close()
        python = os.environ[PYTHON]
        os.execv(python, [python, *argv])
    request = {"argv": argv, "cwd": os.getcwd(), "umask": _umask(), "env": dict(os.environ)}
    socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
    answer = conn.recv(64)
    return int(answer) if answer.strip().isdigit() else 1  # no answer: the child died


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
