"""Compiled-code cache for the Python that runs the sandbox's Ansible modules (loaded through
PYTHONPATH by tests/real/playbook_harness.run_playbook; a transport setting like pipelining:
nothing the playbook does to the hosts changes).

Every Ansible module run unpacks the module and its module_utils as a zip (AnsiballZ) and
imports them with zipimport, which cannot write .pyc files, so each run compiled
ansible.module_utils.basic and the ~40 modules it imports from source again: about 0.4 s of
CPU per module run, most of a playbook run's CPU on the 2-core CI machine (a file installed is
two module runs: stat, then copy or file). Here zipimport's compile step keeps the code it
compiles in CLUSTER_IAC_MODULE_CODE (a folder of the test session's), keyed by the source's
hash and the interpreter's bytecode magic, and reuses it: the same code objects Python would
compile, with the file names of this run's zip.

It also sets how ansible-playbook's forked workers treat the garbage collector (the hook at
the end of this file).
"""

from __future__ import annotations

import gc
import hashlib
import importlib.util
import marshal
import os
import sys
import zipimport
from types import CodeType

_FOLDER = os.environ.get("CLUSTER_IAC_MODULE_CODE", "")
_COMPILE = zipimport._compile_source  # type: ignore[attr-defined]


def _named(code: CodeType, filename: str) -> CodeType:
    """The code object and the ones nested in it with ``filename`` (tracebacks name this
    run's zip, not the one the code was first compiled from)."""
    consts = tuple(_named(c, filename) if isinstance(c, CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=filename, co_consts=consts)


def _compile_source(pathname: str, source: bytes) -> CodeType:
    key = hashlib.sha256(importlib.util.MAGIC_NUMBER + source).hexdigest()
    path = os.path.join(_FOLDER, key)
    try:
        with open(path, "rb") as cached:
            return _named(marshal.loads(cached.read()), pathname)
    except (OSError, EOFError, ValueError, TypeError):
        pass
    code: CodeType = _COMPILE(pathname, source)
    part = f"{path}.{os.getpid()}.part"
    try:
        with open(part, "wb") as out:
            out.write(marshal.dumps(code))
        os.replace(part, path)  # atomic: module runs of parallel forks share the folder
    except OSError:
        pass
    return code


if _FOLDER and os.path.isdir(_FOLDER):
    zipimport._compile_source = _compile_source  # type: ignore[attr-defined]

# the interpreter's own sitecustomize, if it has one (this file's folder first on the path
# hides it)
_HERE = os.path.dirname(os.path.abspath(__file__))
_PATH = sys.path[:]
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]
_SELF = sys.modules.pop(__name__)
try:
    importlib.import_module(__name__)
except ImportError:
    pass
finally:
    sys.path[:] = _PATH
    sys.modules[__name__] = _SELF  # site's import of this module takes it back from there

# ansible-playbook forks a worker process per host and task from its own large heap. The
# objects it holds are frozen across each fork (a worker's collections then never write to
# their pages, each write a copy-on-write fault; the parent takes them back at once), and the
# worker, which runs one task and exits, collects no cycles. Measured on the minimal
# example's first deployment (tests/real/playbook_harness.run_playbook): about a tenth less
# CPU per ansible-playbook run, nothing the playbook does changes.
os.register_at_fork(before=gc.freeze, after_in_parent=gc.unfreeze, after_in_child=gc.disable)
