"""report.md finds each partition's jobs once: the shared answers equal the ones found anew.

shape.node_domain (one pass over the host names) against domain_groups, the plain version it
replaces in job_nodes, and sized_jobs given report.md's asked_jobs against sized_jobs alone, on
every example and on bench specs of a few thousand GPUs.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from cluster_iac.load.loader import load_spec_file
from cluster_iac.plan import Plan
from cluster_iac.plan.collectives import asked_jobs
from cluster_iac.plan.collectives.shape import domain_groups, node_domain, nvlink_owners
from cluster_iac.plan.job_sizes import sized_jobs
from tests.benchmarks import bench_scale
from tests.conftest import EXAMPLE_IDS
from tests.facility_fixtures import compile_data, example_data

BENCH_GPUS = (2048, 4096)


def _bench_plan(gpus: int, tmp_path_factory: pytest.TempPathFactory) -> Plan:
    path = tmp_path_factory.mktemp("bench") / f"bench-{gpus}.yaml"
    path.write_text(bench_scale.spec_yaml(gpus))
    data, _ = load_spec_file(path)
    return compile_data(data)


def _plans(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Plan]]:
    plans = [(name, compile_data(example_data(name))) for name in EXAMPLE_IDS]
    plans += [(f"bench-{g}", _bench_plan(g, tmp_path_factory)) for g in BENCH_GPUS]
    return plans


@pytest.fixture(scope="module")
def plans(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, Plan]]:
    return _plans(tmp_path_factory)


def _assert_domains_agree(plan: Plan) -> int:
    """node_domain of every GPU node equals its domain_groups group; the nodes checked."""
    owners = nvlink_owners(plan)
    checked = 0
    for partition in plan.partitions:
        hosts = {n.hostname: n for n in plan.nodes}
        nodes = tuple(hosts[h] for h in partition.nodes if h in hosts
                      and plan.node_types[hosts[h].node_type].gpu_count > 0)
        groups = list(domain_groups(plan, nodes, owners).values())
        for node in nodes:
            group = next(tuple(g) for g in groups if node in g)
            found = node_domain(plan, nodes, node, owners)
            assert [n.hostname for n in found] == [n.hostname for n in group]
            checked += 1
    return checked


def test_node_domain_is_domain_groups_group(plans: list[tuple[str, Plan]]) -> None:
    assert sum(_assert_domains_agree(plan) for _, plan in plans) > 0


def test_node_domain_outside_the_plans_domains(plans: list[tuple[str, Plan]]) -> None:
    """Without the NVLink pass's domains (none, or only some of them), domain_groups' names."""
    checked = 0
    for _, plan in plans:
        if not plan.nvlink_domains:
            continue
        checked += _assert_domains_agree(replace(plan, nvlink_domains=()))
        half = plan.nvlink_domains[:len(plan.nvlink_domains) // 2]
        checked += _assert_domains_agree(replace(plan, nvlink_domains=half))
    assert checked > 0


def _sized(plan: Plan, given: bool) -> list[tuple[object, ...]]:
    asked = {p.name: asked_jobs(plan, p) for p in plan.partitions} if given else None
    return [(name, s.job, s.asked, s.index, s.nodes, s.gpus, s.available, s.label,
             {end: g.useful for end, g in s.goodput.items()},
             {end: f.per_day for end, f in s.failures.items()})
            for name, sizes in sized_jobs(plan, asked).items() for s in sizes]


def test_sized_jobs_from_asked_jobs_equal_found_anew(plans: list[tuple[str, Plan]]) -> None:
    for name, plan in plans:
        assert _sized(plan, True) == _sized(plan, False), name
