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
from cluster_iac.formats.ibdm import IbdmNameError, export
from cluster_iac.formats.ibnetdiscover import TopologyError, parse
from cluster_iac.write.files import file_digest
from cluster_iac.write.manifest import MANIFEST, read_manifest

_TOPOLOGY = re.compile(r"opensm/([a-z0-9][a-z0-9_-]*)/topology\.ibnetdiscover")


class ExportError(Exception):
    """What stops the export: located diagnostics, said before anything is written."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(f"{len(diagnostics)} error(s)")
        self.diagnostics = diagnostics


def fabrics(tree: Path) -> dict[str, Path]:
    """Fabric name -> its topology file, for every InfiniBand fabric TREE's manifest lists,
    each file known to be the one render wrote. ExportError otherwise."""
    redo = f"render the spec into it again: cluster-iac render SPEC -o {tree}"
    if not tree.is_dir():
        raise ExportError([_at(tree, "IBDM-TREE", "no such folder", "name the folder "
                               "cluster-iac render wrote (its -o), e.g. cluster-iac fabric "
                               "export out --format ibdm -o ibdm")])
    if not (tree / MANIFEST).is_file():
        raise ExportError([_at(tree / MANIFEST, "IBDM-TREE", f"{tree} has no manifest: not a "
                               "tree cluster-iac rendered, or one copied in part", redo)])
    found: dict[str, Path] = {}
    problems = []
    for path, recorded in sorted(read_manifest(tree).items()):
        match = _TOPOLOGY.fullmatch(path)
        if match is None:
            continue
        file = tree / path
        found[match.group(1)] = file
        if not file.is_file():
            problems.append(_at(file, "IBDM-TREE", "missing, though the manifest lists it: "
                                "the tree is copied in part", f"copy the whole tree, or {redo}"))
            continue
        digest = file_digest(file)
        if digest != recorded:
            problems.append(_at(file, "IBDM-STALE", f"SHA-256 {digest[:12]}... is not the "
                                f"{str(recorded)[:12]}... the manifest records: the file was "
                                "edited or copied in part since render wrote it",
                                f"restore it, or {redo}"))
    if problems:
        raise ExportError(problems)
    if not found:
        raise ExportError([_at(tree / MANIFEST, "IBDM-TREE", "the manifest lists no "
                               "opensm/<fabric>/topology.ibnetdiscover: the spec has no "
                               "InfiniBand fabric, or the tree is of an older cluster-iac",
                               f"export a tree with an InfiniBand fabric, or {redo}")])
    return found


def ibdm_files(tree: Path) -> dict[str, str]:
    """The IBDM export of TREE: relative path -> text ('<fabric>.topo', 'ibnl/<TYPE>.ibnl').
    ExportError, with every problem located, when it cannot be made."""
    files: dict[str, str] = {}
    types: dict[str, str] = {}
    problems: list[Diagnostic] = []
    for name, file in fabrics(tree).items():
        text = file.read_text(encoding="utf-8")
        try:
            topo, ibnl = _read(text, file)
        except ExportError as exc:
            problems += exc.diagnostics
            continue
        files[f"{name}.topo"] = topo
        types.update(ibnl)
    if problems:
        raise ExportError(problems)
    files.update({f"ibnl/{kind}.ibnl": text for kind, text in sorted(types.items())})
    return files


def _read(text: str, file: Path) -> tuple[str, dict[str, str]]:
    """One fabric's export (formats.ibdm.export); ExportError located in ``text``."""
    try:
        topology = parse(text)
    except TopologyError as exc:
        lines = text.splitlines()
        shown = lines[exc.line - 1] if 0 < exc.line <= len(lines) else ""
        raise ExportError([Diagnostic("IBDM-STALE", f"not ibnetdiscover's format: {exc.reason}",
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
        raise ExportError([Diagnostic(
            "IBDM-NAME", f"{exc.description!r} cannot be written in an IBDM topology: "
            f"{exc.reason}", file=str(file), line=line, column=at - start + 2 if at >= 0 else 1,
            excerpt=excerpt, hint="rename the device or port in the spec (letters, digits, "
            "'_', '.', '-' in a device name; no '-' in a port name) and render again")]) from None


def _at(path: Path, code: str, message: str, hint: str) -> Diagnostic:
    return Diagnostic(code, message, file=str(path), line=1, column=1, hint=hint)
