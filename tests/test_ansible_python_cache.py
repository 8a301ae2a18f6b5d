"""The compiled-code cache of the sandbox's Ansible module Python
(tests/real/ansible_python/sitecustomize.py): code imported from a zip is kept by its source,
reused from another zip with that zip's file names, and compiled again when the source
changes."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

SITE = Path(__file__).parent / "real" / "ansible_python"
PROBE = ("import sys, traceback\nsys.path.insert(0, sys.argv[1])\nimport payload\n"
         "try:\n    payload.fail()\nexcept ValueError as exc:\n"
         "    print(exc, traceback.extract_tb(exc.__traceback__)[-1].filename)\n")


def _run(zip_path: Path, source: str, cache: Path) -> str:
    with zipfile.ZipFile(zip_path, "w") as archive:
        archive.writestr("payload.py", source)
    env = {**os.environ, "PYTHONPATH": str(SITE), "CLUSTER_IAC_MODULE_CODE": str(cache)}
    result = subprocess.run([sys.executable, "-c", PROBE, str(zip_path)], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    return result.stdout.strip()


def test_zip_code_is_kept_by_source_and_named_after_the_zip_it_came_from(
        tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    first = "def fail():\n    raise ValueError('one')\n"
    assert _run(tmp_path / "a.zip", first, cache) == f"one {tmp_path / 'a.zip' / 'payload.py'}"
    kept = set(cache.iterdir())
    assert len(kept) == 1
    # the same source from another zip: the kept code, with the new zip's file name
    assert _run(tmp_path / "b.zip", first, cache) == f"one {tmp_path / 'b.zip' / 'payload.py'}"
    assert set(cache.iterdir()) == kept
    # a changed source is compiled anew, never the kept code
    second = "def fail():\n    raise ValueError('two')\n"
    assert _run(tmp_path / "c.zip", second, cache) == f"two {tmp_path / 'c.zip' / 'payload.py'}"
    assert len(set(cache.iterdir())) == 2


FORK_PROBE = ("import gc, os\nreader, writer = os.pipe()\npid = os.fork()\n"
              "if pid == 0:\n    os.write(writer, b'1' if gc.isenabled() else b'0')\n"
              "    os._exit(0)\nos.waitpid(pid, 0)\n"
              "print(os.read(reader, 1).decode(), int(gc.isenabled()), gc.get_freeze_count())\n")


def test_a_forked_worker_collects_no_cycles_and_its_parent_keeps_collecting(
        tmp_path: Path) -> None:
    """ansible-playbook's workers are forks: each one runs with the collector off, and the
    parent, after the fork, has its objects back (none left frozen) and collects as before."""
    env = {**os.environ, "PYTHONPATH": str(SITE), "CLUSTER_IAC_MODULE_CODE": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", FORK_PROBE], capture_output=True, text=True,
                            env=env, timeout=60)
    assert result.returncode == 0 and result.stderr == "", result.stderr
    assert result.stdout.split() == ["0", "1", "0"]
    plain = subprocess.run([sys.executable, "-c", FORK_PROBE], capture_output=True, text=True,
                           env={**env, "PYTHONPATH": ""}, timeout=60)
    assert plain.stdout.split() == ["1", "1", "0"]  # the probe tells the two apart
