"""Shared fixtures: the examples and their in-memory builds."""

from __future__ import annotations

import gc
import json
import os
import shutil
import tempfile
from functools import cache
from pathlib import Path

import pytest
from hypothesis import settings

from cluster_iac.render import Build, build
from cluster_iac.write.scan import CACHE_ENV
from tests.real.matrix import MATRIX

# Property tests assert correctness, never time: hypothesis' default 200 ms deadline per example
# failed a CSV property test on the loaded 2-core machine. Speed is the benchmark's to measure.
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")

# The test processes' cyclic garbage collector, for CPU only (what a test does and asserts does
# not change; a test that needs a collection calls gc.collect()). With CPython's default
# thresholds (700, 10, 10) a worker spent ~20 % of its collection of the suite (2.3-2.9 s of
# 10-14 s CPU) and 6-10 % of a pipeline-heavy test file's CPU in the collector, most of it full
# collections walking the imported modules and the collected items again and again. A young
# generation of 10,000 objects collects ~7 times less often (the pipeline's tables are
# long-lived, little of them is cyclic garbage), and what exists once collection ends is
# frozen (gc.freeze: the permanent generation, never walked again; a fork shares its pages).
# Measured: a collection of the suite 13.1 -> 9.8 s CPU (alternating runs, quiet machine);
# test_fuzz.py 141.9 -> 134.0 s CPU, its time in the collector 8.9 -> 4.1 s (the two trees
# run side by side).
GC_THRESHOLDS = (10_000, 10, 10)
gc.set_threshold(*GC_THRESHOLDS)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.yaml"))
EXAMPLE_IDS = [p.stem for p in EXAMPLES]


@cache
def example_build(name: str) -> Build:
    """The full pipeline run on examples/<name>.yaml (cached across tests)."""
    return build(ROOT / "examples" / f"{name}.yaml")


@pytest.fixture(params=EXAMPLE_IDS)
def example(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- running in parallel (pytest-xdist) ----------------------------------------------------
# The README's command runs the suite on several xdist workers with --dist loadgroup. Each
# worker is a process of its own with its own fixtures, so a module- or session-scoped fixture
# of tests/real (a slurmctld per matrix cell, MariaDB+slurmdbd+slurmctld per policy example,
# a Chromium, a built wheel) would start once on every worker that runs one of its tests.
# ``xdist_groups`` keeps the tests that share such a fixture instance on one worker, so each
# daemon starts once, as in a serial run, and the rest of the suite spreads over the workers.

REAL = Path(__file__).resolve().parent / "real"


def _shared_instances(item: pytest.Item) -> list[str]:
    """The project fixtures broader than a test that the item uses (its closure), one name per
    instance: 'scope-node:fixture[param]' (module-scoped ones per module, session-scoped ones
    once, a parametrized one per parameter)."""
    infos = getattr(item, "_fixtureinfo", None)
    if infos is None:
        return []
    params = getattr(getattr(item, "callspec", None), "params", {})
    defs = {name: fixturedefs[-1] for name, fixturedefs in infos.name2fixturedefs.items()
            if fixturedefs}

    def closure(name: str, seen: set[str]) -> set[str]:
        """The fixture and every fixture it depends on."""
        if name not in seen and name in defs:
            seen.add(name)
            for arg in defs[name].argnames:
                closure(arg, seen)
        return seen

    found = []
    for name in infos.names_closure:
        fixturedef = defs.get(name)
        if fixturedef is None or fixturedef.scope == "function" or not getattr(
                fixturedef.func, "__module__", "").startswith("tests."):
            continue
        scope = fixturedef.scope
        node = item.nodeid.split("::")[0] if scope == "module" else (
            item.nodeid.rsplit("::", 1)[0] if scope == "class" else "")
        # a fixture is made again for each parameter of a fixture it depends on (health's
        # module fixture once per policy example)
        param = ",".join(str(params[n]) for n in sorted(closure(name, set())) if n in params)
        found.append(f"{node}:{name}" + (f"[{param}]" if param else ""))
    return found


def xdist_groups(items: list[pytest.Item]) -> dict[str, str]:
    """nodeid -> group of the tests/real items that share a fixture instance: the connected
    parts of 'uses the same instance' (a test of health uses policy[x] too, so health's
    tests and test_slurm_policy_real.py's tests of x go together)."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    uses = {}
    for item in items:
        if REAL not in Path(item.path).parents:
            continue
        instances = _shared_instances(item)
        if instances:
            uses[item.nodeid] = instances
            for other in instances[1:]:
                parent[root(other)] = root(instances[0])
    return {nodeid: root(instances[0]) for nodeid, instances in uses.items()}


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = xdist_groups(items)
    for item in items:
        if item.nodeid in groups and not any(item.iter_markers("xdist_group")):
            item.add_marker(pytest.mark.xdist_group(_group_name(groups[item.nodeid])))
    folder = os.environ.get(GROUPS_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if folder and worker:  # for the controller's scheduler (_GroupScheduling)
        marked = {item.nodeid: "_".join(sorted(str(m.args[0]) for m in
                                                item.iter_markers("xdist_group")))
                  for item in items if any(item.iter_markers("xdist_group"))}
        part = Path(folder) / f"{worker}.part"
        part.write_text(json.dumps(marked))
        part.rename(part.with_suffix(".json"))


def _group_name(key: str) -> str:
    """xdist appends '@<group>' to the node id and reads the group back after the last '@',
    and only when that '@' comes after the last ']' (a parameter id may hold '@'): a group
    named 'case[minimal@22.05/22.05]' would silently be no group at all."""
    return key.replace("@", "~").replace("[", "(").replace("]", ")")


# pytest-xdist 3.8's loadgroup puts the group into the node id (item._nodeid), which pytest 9
# no longer reads (Node.nodeid comes from item._id): every test became a group of its own and
# each worker started the daemons of the tests it drew (seen: one policy example's MariaDB,
# slurmdbd and slurmctld on two workers). So the workers write each marked test's group into
# a folder the controller names, and the controller's scheduler reads them from there.
GROUPS_ENV = "CLUSTER_IAC_XDIST_GROUPS"


_CACHE: list[str] = []  # the cache folder this process made for the session


def pytest_configure(config: pytest.Config) -> None:
    # render's stat records (cluster_iac/write/scan.py) go to a folder of the session's, not
    # the user's cache; a worker inherits its controller's
    if not os.environ.get(CACHE_ENV):
        _CACHE.append(tempfile.mkdtemp(prefix="cluster-iac-cache-"))
        os.environ[CACHE_ENV] = _CACHE[0]
    if not config.pluginmanager.hasplugin("xdist"):
        return
    config.pluginmanager.register(_MatrixFromWorkers(), "cluster-iac-matrix-from-workers")
    if getattr(config, "workerinput", None) is None and config.getoption("dist") == "loadgroup":
        os.environ[GROUPS_ENV] = tempfile.mkdtemp(prefix="cluster-iac-xdist-groups-")
        config.pluginmanager.register(_Scheduler(), "cluster-iac-group-scheduler")


def pytest_collection_finish(session: pytest.Session) -> None:
    """The modules and items collected are the session's for good: frozen (see GC_THRESHOLDS)."""
    gc.collect()
    gc.freeze()


def pytest_unconfigure(config: pytest.Config) -> None:
    for made in _CACHE:
        shutil.rmtree(made, ignore_errors=True)
    folder = os.environ.get(GROUPS_ENV)
    if folder and getattr(config, "workerinput", None) is None:
        shutil.rmtree(folder, ignore_errors=True)


class _Scheduler:
    @pytest.hookimpl
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: object) -> object:
        from xdist.scheduler import LoadGroupScheduling

        class GroupScheduling(LoadGroupScheduling):  # type: ignore[misc]
            """loadgroup, with the groups the workers wrote (GROUPS_ENV)."""

            groups: dict[str, str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                if self.groups is None:
                    self.groups = {}
                    for path in sorted(Path(os.environ[GROUPS_ENV]).glob("*.json")):
                        self.groups.update(json.loads(path.read_text()))
                if nodeid in self.groups:
                    return self.groups[nodeid]
                return str(super()._split_scope(nodeid))

        return GroupScheduling(config, log)


class _MatrixFromWorkers:
    """The real Slurm matrix (tests/real/matrix.py) is filled in the worker that ran the test:
    each worker sends its cells with its results, and the controller prints them all."""

    @pytest.hookimpl
    def pytest_testnodedown(self, node: object, error: object) -> None:
        for cell, columns in getattr(node, "workeroutput", {}).get("slurm_matrix", {}).items():
            for column, passed in columns.items():
                MATRIX.record(cell, column, passed)


def pytest_sessionfinish(session: pytest.Session) -> None:
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker
        workeroutput["slurm_matrix"] = MATRIX.cells


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The real-Slurm matrix printed at the end of a run (serial, or all workers' cells)."""
    if not MATRIX.cells or getattr(terminalreporter.config, "workeroutput", None) is not None:
        return
    terminalreporter.section("real Slurm matrix")
    terminalreporter.write(MATRIX.table())
    path = MATRIX.write()
    if path is not None:
        terminalreporter.write_line(f"written to {path}")
