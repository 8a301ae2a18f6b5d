"""`cluster-iac labels TREE`: the cables' labels, one at each end, for the whole cluster or the
racks a crew cables today, printed from a rendered tree's cabling/cables.csv.

A view of the tree, not a render: the spec is not compiled, so the labels are those of the tree
that was reviewed. cables.csv is first held to the digest the tree's manifest records (the
file render wrote, not one edited by hand or copied in part). A label's text is
plan/labels.py's, the rule the plain labels of the plan's cable table follow too. The labels
are written as the cables are read, a block at a time: the whole cluster's (85 MiB at 100,000
GPUs) are never held, nor the table they are made from. Only with --rack or --row are the
chosen cables' labels held, until every named rack is known to be cabled in the tree.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import NoReturn, TextIO

import click

from cluster_iac.base.errors import Diagnostic
from cluster_iac.base.hostlist import HostlistError, expand, top_level_parts
from cluster_iac.base.suggest import did_you_mean
from cluster_iac.cli.console import format_diagnostic
from cluster_iac.cli.rendered import TreeError, at, held_files
from cluster_iac.formats.csv import csv_cell
from cluster_iac.plan.labels import LABEL_COLUMNS, label_texts, place
from cluster_iac.write.files import replace_file
from cluster_iac.write.manifest import MANIFEST

CABLES = "cabling/cables.csv"
_NEEDED = ("cable_id", "a_row", "a_rack", "a_u", "a_device", "a_port",
           "b_row", "b_rack", "b_u", "b_device", "b_port")
_BLOCK = 4096  # cables whose labels are written as one piece
_FORMULA = ("=", "+", "-", "@", "\t")  # the first characters csv_cell neutralises
_MOST_NAMES = 1_000_000  # a --rack or --row hostlist naming more is refused unexpanded


@click.command("labels")
@click.argument("tree", type=click.Path(path_type=Path))
@click.option("--rack", metavar="HOSTLIST",
              help="Only the cables with an end in these racks: r[1-8],r12.")
@click.option("--row", metavar="HOSTLIST",
              help="Only the cables with an end in a rack of these rows (with --rack: either).")
@click.option("-o", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the labels to this file (atomically) instead of standard output.")
def labels(tree: Path, rack: str | None, row: str | None, out_file: Path | None) -> None:
    """Print the labels of TREE's cables (a folder `cluster-iac render` wrote) as CSV:
    cable_id,end,label, two lines a cable (its A end's label, then its B end's), in the order
    of cabling/cables.csv, e.g. 'CF-r1.U01.ib0 r1.U01 g00001:ib0 > net1.U18 leaf-1:p1'.
    Read from TREE's cabling/cables.csv, which must be the file render wrote (its manifest's
    digest); the spec is not compiled."""
    choice = _Choice({"--rack": rack or "", "--row": row or ""})
    printed = _Printed()
    try:
        cables = checked_cables(tree)
        with open(cables, encoding="utf-8", newline="") as handle:
            made = LabelLines(handle, str(cables), choice if choice.any else None)
            if choice.any:  # the chosen cables' labels held until every name is known
                held = list(made.blocks())
                choice.check()
                _write(held, out_file, printed)
            else:
                _write(made.blocks(), out_file, printed)
    except TreeError as exc:
        _fail(exc.diagnostics, printed)
    except UnicodeDecodeError as exc:
        _fail([at(tree / CABLES, "LABELS-STALE", f"not UTF-8 text ({exc.reason})",
                   "render the spec into the tree again")], printed)
    except BrokenPipeError:  # the reader stopped (labels | head): nothing more to say
        _quiet_stdout()
        sys.exit(1)
    except OSError as exc:
        _fail([Diagnostic("LABELS-TREE", f"cannot read or write: {exc.strerror or exc}",
                          file=str(exc.filename or tree), line=1, column=1,
                          hint="check the path and its permissions")], printed)
    if out_file is not None:
        click.echo(f"{out_file}: {2 * made.count} labels of {made.count} cables")


def checked_cables(tree: Path) -> Path:
    """TREE's cables.csv, once it is known to be the file render wrote: the tree's manifest
    lists it with the SHA-256 it has (rendered.held_files). TreeError otherwise."""
    found = held_files(tree, CABLES.__eq__, "LABELS", "cluster-iac labels out")
    if CABLES not in found:
        raise TreeError([at(tree / MANIFEST, "LABELS-TREE", f"the manifest records no digest "
                            f"of {CABLES}: a tree of an older cluster-iac", "render the spec "
                            f"into it again: cluster-iac render SPEC -o {tree}")])
    return found[CABLES]


class LabelLines:
    """The labels of the cables of an open cables.csv, as CSV text a block of cables at a
    time (blocks); ``count``: the cables labelled so far. ``choice``: only the cables it
    keeps, whose racks and rows it learns as they pass."""

    def __init__(self, handle: TextIO, file: str, choice: _Choice | None = None) -> None:
        self.handle, self.file, self.choice = handle, file, choice
        self.count = 0
        header = handle.readline()
        names = next(csv.reader([header]), [])
        missing = [name for name in _NEEDED if name not in names]
        if missing:
            raise TreeError([self._line("LABELS-COLUMN", 1, header, "no column "
                                          + ", ".join(missing), "render the spec again")])
        self.width = len(names)
        at = {name: names.index(name) for name in _NEEDED}
        self.id, self.a_port, self.b_port = at["cable_id"], at["a_port"], at["b_port"]
        self.a = (at["a_rack"], at["a_u"], at["a_device"])
        self.b = (at["b_rack"], at["b_u"], at["b_device"])
        self.where = (at["a_rack"], at["b_rack"], at["a_row"], at["b_row"])
        self.places: dict[str, str] = {}  # device -> its place text

    def blocks(self) -> Iterator[str]:
        """The header, then the labels of each block of _BLOCK cables."""
        yield ",".join(LABEL_COLUMNS) + "\n"
        block: list[str] = []
        keep = self.choice.keeps(self.where) if self.choice else None
        places, a_device, b_device = self.places, self.a[2], self.b[2]
        for number, line in enumerate(self.handle, start=2):
            cells, plain = self._cells(number, line)
            if keep is not None and not keep(cells):
                continue
            cable_id = cells[self.id]
            a_place = places.get(cells[a_device]) or self._place(cells, self.a, number, line)
            b_place = places.get(cells[b_device]) or self._place(cells, self.b, number, line)
            a_label, b_label = label_texts(cable_id, a_place + cells[self.a_port],
                                           b_place + cells[self.b_port])
            if plain and not cable_id.startswith(_FORMULA):
                block.append(f"{cable_id},A,{a_label}\n{cable_id},B,{b_label}\n")
            else:  # a cell CSV quotes or neutralises: csv_cell writes each, as render would
                cell = csv_cell(cable_id)
                block.append(f"{cell},A,{csv_cell(a_label)}\n{cell},B,{csv_cell(b_label)}\n")
            if len(block) == _BLOCK:
                self.count += len(block)
                yield "".join(block)
                block = []
        self.count += len(block)
        yield "".join(block)

    def _cells(self, number: int, line: str) -> tuple[list[str], bool]:
        """A line's cells as the values render wrote (unquoted, an apostrophe csv_cell put
        before a formula-like value taken off), and whether they were all plain CSV cells."""
        plain = '"' not in line and "'" not in line
        cells = line.rstrip("\n").split(",") if plain else next(csv.reader([line]), [])
        if len(cells) != self.width:
            raise TreeError([self._line("LABELS-COLUMN", number, line, f"{len(cells)} cells "
                                          f"where the header names {self.width}",
                                          "render the spec again")])
        if "'" in line:
            cells = [c[1:] if c.startswith("'") and c[1:2] in _FORMULA and len(c) > 2 else c
                     for c in cells]
        return cells, plain

    def _place(self, cells: list[str], at: tuple[int, int, int], number: int,
               line: str) -> str:
        """An end's place text (plan/labels.py's place), made once per device: render writes
        a device's rack and U alike on each of its cables' lines."""
        rack, u, device = (cells[k] for k in at)
        if u and not u.isdigit():
            raise TreeError([self._line("LABELS-COLUMN", number, line, f"U {u!r} is not a "
                                          "rack unit", "render the spec again")])
        found = self.places[device] = place(rack, int(u) if u else None, device)
        return found

    def _line(self, code: str, number: int, line: str, message: str, hint: str) -> Diagnostic:
        return Diagnostic(code, message, line=number, column=1, file=self.file,
                          excerpt=line.rstrip("\r\n")[:400], hint=hint)


class _Choice:
    """The racks and rows --rack and --row name (each with the column of the part that names
    it), and the racks and rows the tree's cables reach, learnt while the cables are read."""

    def __init__(self, expressions: dict[str, str]) -> None:
        self.expressions = expressions
        self.racks = _names("--rack", expressions["--rack"])
        self.rows = _names("--row", expressions["--row"])
        self.any = bool(self.racks or self.rows)
        self.seen_racks: set[str] = set()
        self.seen_rows: set[str] = set()

    def keeps(self, where: tuple[int, int, int, int]) -> Callable[[list[str]], bool]:
        """Whether a cable (its cells) has an end in a chosen rack or row."""
        a_rack, b_rack, a_row, b_row = where
        racks, rows, seen_racks, seen_rows = self.racks, self.rows, self.seen_racks, self.seen_rows

        def keep(cells: list[str]) -> bool:
            at_racks = (cells[a_rack], cells[b_rack])
            at_rows = (cells[a_row], cells[b_row])
            seen_racks.update(at_racks)
            seen_rows.update(at_rows)
            return (any(name in racks for name in at_racks)
                    or any(name in rows for name in at_rows))

        return keep

    def check(self) -> None:
        """TreeError for each named rack or row no cable of the tree reaches."""
        problems = [*self._unknown("--rack", "LABELS-RACK", self.racks, self.seen_racks),
                    *self._unknown("--row", "LABELS-ROW", self.rows, self.seen_rows)]
        if problems:
            raise TreeError(problems)

    def _unknown(self, option: str, code: str, named: dict[str, int],
                 seen: set[str]) -> Iterator[Diagnostic]:
        kind = option.removeprefix("--")
        known = sorted(seen - {""})
        for name, column in named.items():
            if name not in seen or not name:
                hint = did_you_mean(name, known) or f"the {kind}s the tree cables: " + (
                    ", ".join(known[:12]) + (f" and {len(known) - 12} more"
                                             if len(known) > 12 else ""))
                yield Diagnostic(code, f"{kind} {name!r} has no cable in {CABLES}",
                                 file=option, line=1, column=column,
                                 excerpt=self.expressions[option], hint=hint)


def _names(option: str, expression: str) -> dict[str, int]:
    """The names a hostlist option writes -> the column of the part that writes it."""
    if not expression:
        return {}
    found: dict[str, int] = {}
    try:
        for column, part in top_level_parts(expression):
            for name in expand(part, _MOST_NAMES):
                found.setdefault(name, column)
    except HostlistError as exc:
        raise click.BadParameter(f"{exc}; write names and ranges, e.g. r[1-8],r12",
                                 param_hint=option) from None
    return found



class _Printed:
    """Whether labels have gone to standard output (an error in the middle of cables.csv
    then leaves them cut short)."""

    started = False


def _write(blocks: Iterable[str], out_file: Path | None, printed: _Printed) -> None:
    """The labels on standard output, or into ``out_file`` through a temp file and a rename
    (a failure leaves the file as it was)."""
    if out_file is None:
        for block in blocks:
            click.echo(block, nl=False)
            printed.started = True
        return
    replace_file(out_file, blocks)


def _fail(diagnostics: list[Diagnostic], printed: _Printed) -> NoReturn:
    for diag in diagnostics:
        click.echo(format_diagnostic(diag, None, diag.file or ""), err=True)
    done = "the labels printed are cut short" if printed.started else "no labels written"
    click.echo(f"{len(diagnostics)} error(s); {done}", err=True)
    sys.exit(1)


def _quiet_stdout() -> None:
    """Standard output pointed at /dev/null, so that the interpreter's last flush does not
    fail again on the closed pipe."""
    with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
