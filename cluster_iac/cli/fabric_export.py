"""`cluster-iac fabric export TREE --format ibdm -o DIR`: the expected InfiniBand fabrics of a
rendered tree in the forms field verification tools read, derived from the tree's
opensm/<fabric>/topology.ibnetdiscover (the fabric as planned) rather than written by render.

A view of the tree, not a render: the spec is not compiled. Each topology file is first held
to the digest the tree's manifest records, as `cluster-iac labels` holds cables.csv. The IBDM
export (formats/ibdm.py) is DIR/<fabric>.topo for each fabric and DIR/ibnl/<TYPE>.ibnl for
each system type they name; nothing is written when an error is found.
"""

from __future__ import annotations

import re
from pathlib import Path

from cluster_iac.base.errors import Diagnostic
from cluster_iac.cli.rendered import TreeError, at, held_files
from cluster_iac.formats.ibdm import IbdmNameError, export
from cluster_iac.formats.ibnetdiscover import TopologyError, parse
from cluster_iac.write.manifest import MANIFEST

_TOPOLOGY = re.compile(r"opensm/([a-z0-9][a-z0-9_-]*)/topology\.ibnetdiscover")


def fabrics(tree: Path) -> dict[str, Path]:
    """Fabric name -> its topology file, for every InfiniBand fabric TREE's manifest lists,
    each file known to be the one render wrote (rendered.held_files). TreeError otherwise."""
    found = held_files(tree, _TOPOLOGY.fullmatch, "IBDM",
                       "cluster-iac fabric export out --format ibdm -o ibdm")
    if not found:
        raise TreeError([at(tree / MANIFEST, "IBDM-TREE", "the manifest lists no "
                            "opensm/<fabric>/topology.ibnetdiscover: the spec has no "
                            "InfiniBand fabric, or the tree is of an older cluster-iac",
                            "export a tree with an InfiniBand fabric, or render the spec into "
                            f"it again: cluster-iac render SPEC -o {tree}")])
    return {_fabric(path): file for path, file in found.items()}


def _fabric(path: str) -> str:
    """The fabric of a topology file's path: 'opensm/compute/...' -> 'compute'."""
    match = _TOPOLOGY.fullmatch(path)
    assert match is not None  # held_files took only the paths it matches
    return match.group(1)


def ibdm_files(tree: Path) -> dict[str, str]:
    """The IBDM export of TREE: relative path -> text ('<fabric>.topo', 'ibnl/<TYPE>.ibnl').
    TreeError, with every problem located, when it cannot be made."""
    files: dict[str, str] = {}
    types: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for name, file in fabrics(tree).items():
        text = file.read_text(encoding="utf-8")
        try:
            topo, ibnl = _read(text, file)
        except TreeError as exc:
            problems += exc.diagnostics
            continue
        files[f"{name}.topo"] = topo
        types.update(ibnl)
    if problems:
        raise TreeError(problems)
    files.update({f"ibnl/{kind}.ibnl": text for kind, text in sorted(types.items())})
    return files


def _read(text: str, file: Path) -> tuple[str, dict[str, str]]:
    """One fabric's export (formats.ibdm.export); TreeError located in ``text``."""
    try:
        topology = parse(text)
    except TopologyError as exc:
        lines = text.splitlines()
        shown = lines[exc.line - 1] if 0 < exc.line <= len(lines) else ""
        raise TreeError([Diagnostic("IBDM-STALE", f"not ibnetdiscover's format: {exc.reason}",
                                      file=str(file), line=exc.line, column=1, excerpt=shown,
                                      hint="render the spec into the tree again")]) from None
    try:
        return export(topology)
    except IbdmNameError as exc:
        quoted = f'"{exc.description}"'
        at = text.find(quoted)
        line = text.count("\n", 0, at) + 1 if at >= 0 else 1
        start = text.rfind("\n", 0, at) + 1 if at >= 0 else 0
        excerpt = text[start:text.find("\n", start)] if at >= 0 else None
        raise TreeError([Diagnostic(
            "IBDM-NAME", f"{exc.description!r} cannot be written in an IBDM topology: "
            f"{exc.reason}", file=str(file), line=line, column=at - start + 2 if at >= 0 else 1,
            excerpt=excerpt, hint="rename the device or port in the spec (letters, digits, "
            "'_', '.', '-' in a device name; no '-' in a port name) and render again")]) from None
