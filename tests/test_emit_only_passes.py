"""compile.EMIT_ONLY: the passes whose product only the emitters read, left out by validate and
by a render or check that finds its folder current. Held here: the checks find the same with
and without them, the lock's text is the same, and for_emit's plan renders what every pass's
plan renders."""

from __future__ import annotations

import pytest

from cluster_iac.checks import run_checks
from cluster_iac.compile import EMIT_ONLY, compile_plan, for_emit
from cluster_iac.emit import render_all
from cluster_iac.load.loader import load_spec_file
from cluster_iac.lock.text import lock_text
from cluster_iac.plan.host_rails import host_rails
from cluster_iac.spec.parse import parse_spec
from tests.conftest import EXAMPLE_IDS, EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=EXAMPLE_IDS)
def test_what_the_checks_and_the_lock_read_is_made_without_them(path: object) -> None:
    spec = parse_spec(load_spec_file(path)[0])  # type: ignore[arg-type]
    full = compile_plan(spec)
    lean = compile_plan(spec, emit_only=False)
    assert run_checks(lean) == run_checks(full)
    assert lock_text(lean, lean.lock, "x.yaml") == lock_text(full, full.lock, "x.yaml")
    assert render_all(for_emit(spec, lean)) == render_all(full)


def test_the_management_switches_are_emit_only() -> None:
    """The example with management and BMC switches: the lean plan has none of their
    configurations, for_emit all of them."""
    spec = parse_spec(load_spec_file(EXAMPLES[EXAMPLE_IDS.index("seed-64gpu-h100")])[0])
    lean = compile_plan(spec, emit_only=False)
    assert EMIT_ONLY and lean.management_configs == {}
    made = for_emit(spec, lean).management_configs
    assert made and made.keys() == compile_plan(spec).management_configs.keys()


def test_the_host_rails_are_emit_only_and_made_once() -> None:
    """The RoCE example: the lean plan has no rails; for_emit's table is host_rails' of the
    compute fabric, every GPU node with its eight NICs, which the four emitters read, the
    node type's eight RailPorts shared by its hosts."""
    spec = parse_spec(load_spec_file(EXAMPLES[EXAMPLE_IDS.index("spectrum-x-roce")])[0])
    lean = compile_plan(spec, emit_only=False)
    assert lean.rails == {}
    made = for_emit(spec, lean).rails
    assert made.keys() == {"compute"}
    assert made["compute"] == host_rails(compile_plan(spec), "compute")
    nodes = [n.hostname for n in lean.compute_nodes]
    assert sorted(made["compute"]) == sorted(nodes)
    assert {len(rails) for rails in made["compute"].values()} == {8}
    # what a rail is on every host of the node type is one record (RailPort), not one a host
    assert len({id(r.port) for rails in made["compute"].values() for r in rails}) == 8


def test_the_fabric_switches_ports_are_emit_only() -> None:
    """The RoCE example: the lean plan's fabric switches have their identities (what the lock
    and the checks read) and no port or session; for_emit's are the full plan's, port for
    port, session for session, and keep plan_qos' QoS reference."""
    spec = parse_spec(load_spec_file(EXAMPLES[EXAMPLE_IDS.index("spectrum-x-roce")])[0])
    full = compile_plan(spec)
    lean = compile_plan(spec, emit_only=False)
    assert lean.switch_configs.keys() == full.switch_configs.keys()
    assert all(not c.interfaces and not c.routing.neighbors for c in lean.switch_configs.values())
    made = for_emit(spec, lean).switch_configs
    for name, config in full.switch_configs.items():
        lean_one, made_one = lean.switch_configs[name], made[name]
        assert (lean_one.asn, lean_one.loopback, lean_one.p2p_block) == (
            config.asn, config.loopback, config.p2p_block)
        assert made_one.interfaces == config.interfaces and made_one.bgp == config.bgp
        assert made_one.qos is lean.qos[config.fabric] is lean_one.qos
    assert any(c.interfaces for c in made.values())
