"""A rendered tree's files read without compiling the spec (`cluster-iac labels`, `fabric
export`): each held first to the SHA-256 the tree's manifest records, so that what is read is
the file render wrote, not one edited by hand or copied in part since."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from cluster_iac.base.errors import Diagnostic
from cluster_iac.write.files import file_digest
from cluster_iac.write.manifest import MANIFEST, read_manifest


class TreeError(Exception):
    """What stops a command reading a tree: located diagnostics, said before anything is
    written."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(f"{len(diagnostics)} error(s)")
        self.diagnostics = diagnostics


def held_files(tree: Path, wanted: Callable[[str], object], code: str,
               example: str) -> dict[str, Path]:
    """Path -> file, for each file TREE's manifest lists whose path ``wanted`` takes, each
    with the SHA-256 the manifest records; empty where it lists none (the caller says what it
    needed). TreeError otherwise, every problem located: ``code``-TREE for no such folder, no
    manifest or a listed file missing, ``code``-STALE for another digest. ``example``: the
    command run on a folder `out`, for the hint of a folder that is not one."""
    redo = f"render the spec into it again: cluster-iac render SPEC -o {tree}"
    if not tree.is_dir():
        raise TreeError([at(tree, f"{code}-TREE", "no such folder", "name the folder "
                            f"cluster-iac render wrote (its -o), e.g. {example}")])
    if not (tree / MANIFEST).is_file():
        raise TreeError([at(tree / MANIFEST, f"{code}-TREE", f"{tree} has no manifest: not a "
                            "tree cluster-iac rendered, or one copied in part", redo)])
    found: dict[str, Path] = {}
    problems = []
    for path, recorded in sorted(read_manifest(tree).items()):
        if not wanted(path):
            continue
        file = found[path] = tree / path
        if not file.is_file():
            problems.append(at(file, f"{code}-TREE", "missing, though the manifest lists it: "
                               "the tree is copied in part", f"copy the whole tree, or {redo}"))
            continue
        digest = file_digest(file)
        if digest != recorded:
            problems.append(at(file, f"{code}-STALE", f"SHA-256 {digest[:12]}... is not the "
                               f"{str(recorded)[:12]}... the manifest records: the file was "
                               "edited or copied in part since render wrote it",
                               f"restore it (git checkout -- {file}), or {redo}"))
    if problems:
        raise TreeError(problems)
    return found


def at(path: Path, code: str, message: str, hint: str) -> Diagnostic:
    """A diagnostic about a whole file (its first line)."""
    return Diagnostic(code, message, file=str(path), line=1, column=1, hint=hint)
