"""The sandbox's stand-in for systemctl and scontrol in the playbook's action tasks (tests only).

    python3 service_request.py REQUESTS ARG...   (CLUSTER_IAC_HOST: the host it runs for)

It hands ARG... to the test's service manager (tests/real/playbook_harness.py, a thread of the
test process that owns the real daemons, as systemd would) through a file in REQUESTS, waits for
the answer and exits with its status. Only the daemons' supervisor is stood in for: the requests
are carried out on real slurmctld/slurmd.
"""

import json
import os
import sys
import time
from pathlib import Path

WAIT_S = 120.0


def main() -> int:
    requests = Path(sys.argv[1])
    name = f"{time.time_ns():020d}-{os.getpid()}"
    body = {"argv": sys.argv[2:], "host": os.environ.get("CLUSTER_IAC_HOST", "")}
    (requests / f"{name}.tmp").write_text(json.dumps(body))
    (requests / f"{name}.tmp").rename(requests / f"{name}.json")
    done = requests / f"{name}.done"
    deadline = time.monotonic() + WAIT_S
    while not done.exists():
        if time.monotonic() > deadline:
            print("the test's service manager did not answer", file=sys.stderr)
            return 124
        time.sleep(0.05)
    answer = json.loads(done.read_text())
    sys.stdout.write(answer["out"])
    return int(answer["rc"])


if __name__ == "__main__":
    sys.exit(main())
