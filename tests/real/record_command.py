"""A stand-in for the commands of the change plan's node actions in the real playbook tests
(tests/real/test_playbook_real.py): it appends one JSON line, ``[host, what, argv...]``, to
the log named by its first argument, so a test reads the order in which the playbook ran
them, then answers as the real command would where the playbook reads the answer:

- ``LOG scontrol ARGS``: logged only (drain and resume change nothing here);
- ``LOG hostnames HOSTLIST``: the names, one a line, as ``scontrol show hostnames`` prints them
  (cluster_iac.base.hostlist, the expander the tool's hostlists are tested against);
- ``LOG netplan ROOTS``: real ``netplan generate --root-dir ROOTS/<host>`` (never ``netplan
  apply`` on this machine's interfaces), its status the stand-in's.

The host is ``CLUSTER_IAC_HOST`` (the playbook sets it on every delegated command).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cluster_iac.base.hostlist import expand


def main(argv: list[str]) -> int:
    log, what, *args = argv
    host = os.environ.get("CLUSTER_IAC_HOST", "")
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps([host, what, *args]) + "\n")
    if what == "hostnames":
        print("\n".join(expand(args[-1])))
    elif what == "netplan":
        return subprocess.run(["netplan", "generate", "--root-dir", f"{args[0]}/{host}"],
                              timeout=60, check=False).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
