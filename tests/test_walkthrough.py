"""A new user's first spec, end to end: `init` an H200 / NDR / Lustre cluster, make the edits
people make, validate, render. Every error met on the way names the key to change, and the
fix it names is the one that works."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner, Result

from cluster_iac.cli.main import main

INIT = ["init", "--name", "h200", "--nodes", "32", "--gpu", "h200-sxm-141gb", "--lustre",
        "--accounting"]
ERROR = re.compile(r"^\S+:(\d+):(\d+): error\[([A-Z0-9-]+)\] (.*)$")


def _run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args])


def _errors(output: str) -> list[tuple[str, str, str]]:
    """(code, message, hint) of each error printed."""
    lines = output.splitlines()
    found = []
    for i, line in enumerate(lines):
        match = ERROR.match(line)
        if match:
            hint = next((ln.split("= hint: ", 1)[1] for ln in lines[i + 1:i + 4]
                         if "= hint: " in ln), "")
            found.append((match[3], match[4], hint))
    return found


def _edit(spec: Path, old: str, new: str) -> None:
    text = spec.read_text()
    assert old in text, old
    spec.write_text(text.replace(old, new, 1))


def _assert_names(output: str, wanted: dict[str, str]) -> None:
    """Exactly the codes of ``wanted`` are errors, and each one's message or hint names
    its key."""
    errors = _errors(output)
    assert {code for code, _, _ in errors} == set(wanted), output
    for code, message, hint in errors:
        assert wanted[code] in message + " " + hint, (code, message, hint)


def test_init_edit_validate_render(tmp_path: Path) -> None:
    spec = tmp_path / "h200.yaml"
    out = tmp_path / "out"

    # 1. init: the answers give a spec that validates as it is
    made = _run(*INIT, "-o", spec)
    assert made.exit_code == 0 and f"next: cluster-iac validate {spec}" in made.output
    first = _run("validate", spec)
    assert first.exit_code == 0, first.output
    assert "ok (37 nodes, 256 GPUs" in first.output and "6 finding(s)" in first.output
    # no error; six warnings are design questions init cannot answer (issue 40): growth
    # room on the spines, the in-band interface's name, the storage fabric's one switch,
    # and the facility feed of each of its three PDU profiles (no inlet_a)
    assert not _errors(first.output)
    assert [code for code in ("FABRIC-GROWTH", "NCCL-GUESSED-IFNAME", "SPOF-FABRIC-SWITCH")
            if f"warning[{code}]" in first.output] == ["FABRIC-GROWTH", "NCCL-GUESSED-IFNAME",
                                                       "SPOF-FABRIC-SWITCH"]
    assert first.output.count("warning[POWER-FEED-ASSUMED]") == 3

    # 2. a NIC list of one's own (the storage HCA with the fabric HCAs) drops the in-band
    # and BMC adapters the platform had: each is an error that points at nics_add
    _edit(spec, "    nics_add:\n    - {role: storage, model: cx7-ndr}\n",
          "    nics:\n    - {role: compute, model: cx7-ndr, count: 8}\n"
          "    - {role: storage, model: cx7-ndr}\n")
    result = _run("validate", spec)
    assert result.exit_code == 1
    _assert_names(result.output, {"SPEC-NIC-MISSING": "nics_add"})
    assert "networks.management" in result.output and "networks.bmc" in result.output
    _edit(spec, "    nics:\n    - {role: compute, model: cx7-ndr, count: 8}\n"
          "    - {role: storage, model: cx7-ndr}\n",
          "    nics_add:\n    - {role: storage, model: cx7-ndr}\n")  # the fix it names
    assert _run("validate", spec).exit_code == 0

    # 3. the storage fabric looks like one thing too many: without it the Lustre servers
    # (storage NICs only) have no NID, and the message says so and names fabric.storage
    text = spec.read_text()
    storage_fabric = next(ln for ln in text.splitlines() if ln.startswith("  storage: {tech"))
    _edit(spec, storage_fabric + "\n", "")
    result = _run("validate", spec)
    _assert_names(result.output, {"LUSTRE-NID": "fabric.storage",
                                  "LUSTRE-UNREACHABLE": "nics_add"})
    nid = next(m for c, m, _ in _errors(result.output) if c == "LUSTRE-NID")
    assert "have no compute NIC (node type(s) mds, oss" in nid
    assert "declare networks.ipoib" not in result.output  # the old, wrong advice
    _edit(spec, "fabric:\n", "fabric:\n" + storage_fabric + "\n")
    assert _run("validate", spec).exit_code == 0

    # 4. more nodes a rack than the racks can cool and feed
    _edit(spec, "per_rack: 3}", "per_rack: 4}")
    result = _run("validate", spec)
    _assert_names(result.output, {"COOLING-AIR": "per_rack",
                                  "POWER-REDUNDANCY": "breaker_a"})
    _edit(spec, "per_rack: 4}", "per_rack: 3}")

    # 5. a misspelt key
    _edit(spec, "  accounting:\n", "  acounting:\n")
    result = _run("validate", spec)
    _assert_names(result.output, {"SPEC-UNKNOWN-KEY": "did you mean 'accounting'?"})
    _edit(spec, "  acounting:\n", "  accounting:\n")

    # 6. a finding code the user does not know: explain says what it means and the fix
    explained = _run("explain", "LUSTRE-NID")
    assert explained.exit_code == 0 and "fabric.storage" in explained.output

    # 7. validate, then render
    assert _run("validate", spec).exit_code == 0
    rendered = _run("render", spec, "-o", out)
    assert rendered.exit_code == 0, rendered.output
    slurm_conf = (out / "slurm" / "slurm.conf").read_text()
    assert "ClusterName=h200" in slurm_conf and "NodeName=gpu[01-32]" in slurm_conf
    assert "Gres=gpu:h200" in slurm_conf.replace("_", "")  # the H200 from the GPU answer
    assert any((out / "lustre").iterdir())
