"""Fabric links kept by the lock: a switch's cables up (a leaf's to spines, a spine's to
cores) stay on the ports the lock's ``links`` lines hold, so growth lays new cables and moves
none the design can keep.

compile/fabric_cables.py spreads the uplinks of the design as built (each lower switch the
same number of cables to each of its upper ones, on each switch's next ports). Here that
spread is kept in what it says (which switch is cabled to which, how many times) but each
cable takes the ports the lock holds for it where it can:

1. each locked cable of a lower switch that the design still has (the same switch above,
   up to as many cables as the design gives the pair) keeps both its ports, when both are
   ports of their switches and free (not a host's, not another kept cable's);
2. every other cable of the design takes its spread's ports when free, else the lowest free
   port of its lower switch from the first uplink port on (then from port 1), and of its
   upper switch from port 1.

A locked cable not kept is moved, with why (LinkMove, plan.link_moves: `cluster-iac changes`
lists them). Each kept cable is as many as the design allows: where a pair had 2 cables and
now has 1, one stays; so the moves are the fewest the new spread needs (checks/
fabric_growth.py moved_cables counts the same). A lock from before links lines holds none:
the spread is laid as it is, and written.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from cluster_iac.base.runs import runs
from cluster_iac.compile.fabric_cables import PORT_NAMES, Wiring
from cluster_iac.plan.kept import Lock
from cluster_iac.plan.physical import Links
from cluster_iac.plan.wiring import LinkMove

# a port name -> its number ('p17' -> 17): looked up, not parsed (400,000 ends at 100,000 GPUs)
_NUMBERS = {name: number for number, name in enumerate(PORT_NAMES) if number}


def uplink_texts(a_device: Sequence[str], a_port: Iterable[str], b_device: Iterable[str],
                 b_port: Iterable[str]) -> dict[str, str]:
    """Each lower switch's cables up as its links line holds them: 'port:peer:port' joined
    by ',', in the cables' order (a switch's cables are laid together: each run of them
    joined at once: about 0.07 s CPU for the 200,000 of 100,000 GPUs)."""
    cables = list(map(":".join, zip(a_port, b_device, b_port, strict=True)))
    texts: dict[str, str] = {}
    for start, stop in runs(a_device):  # each run's bounds found at C speed
        lower = a_device[start]
        text = ",".join(cables[start:stop])
        texts[lower] = f"{texts[lower]},{text}" if lower in texts else text
    return texts


def keep_links(lock: Lock, wiring: Wiring, start: int, ports: Mapping[str, int],
               host_cages: Mapping[str, int]) -> list[LinkMove]:
    """The uplink cables of ``wiring`` (its cable rows from ``start`` on) on the ports the
    lock's links lines hold for them, where the design can keep them; the locked cables it
    cannot keep, each with why. ``ports``: each switch's port count; ``host_cages``: each
    leaf's cages taken by hosts (ports 1 to that)."""
    held = {entry.key[2]: entry.value[0] for entry in
            lock.of_kind("links", wiring.network)} if lock.exists else {}
    columns = wiring.cables.columns
    a_device, a_port, b_device, b_port = (column[start:] for column in columns[2:6])
    if not held or not a_device:
        return []
    fresh = uplink_texts(a_device, a_port, b_device, b_port)
    if all(held.get(lower, text) == text for lower, text in fresh.items()):
        return []  # the lock holds the spread as it is (or nothing of its switches)
    rows: dict[str, list[int]] = {}
    for row, lower in enumerate(a_device):
        rows.setdefault(lower, []).append(row)
    taken = _Taken(ports, host_cages)
    kept: dict[int, tuple[str, str]] = {}
    moves: list[LinkMove] = []
    same: set[str] = set()  # lower switches whose cables the lock holds as spread
    for lower, mine in rows.items():  # leaves first, then spines: as the cables were laid
        text = held.get(lower)
        if text is None or text == fresh[lower] and not _any_taken(taken, lower, mine, a_port,
                                                                    b_device, b_port):
            if text is not None:  # the lock holds these cables as the spread lays them
                same.add(lower)
                for row in mine:
                    taken.take(lower, a_port[row])
                    taken.take(b_device[row], b_port[row])
            continue
        open_rows: dict[str, list[int]] = {}
        for row in mine:
            open_rows.setdefault(b_device[row], []).append(row)
        cables = [part.split(":") for part in text.split(",")]
        for port, peer, peer_port in cables:
            why = _why_moved(taken, lower, port, peer, peer_port, open_rows, mine, b_device)
            if why.endswith("fewer than the lock holds"):
                why += f" ({sum(cable[1] == peer for cable in cables)})"
            if why:
                moves.append(LinkMove(wiring.network, lower, port, peer, peer_port, why))
                continue
            row = open_rows[peer].pop(0)
            kept[row] = (port, peer_port)
            taken.take(lower, port)
            taken.take(peer, peer_port)
    first_up = {lower: min(_number(a_port[row]) or 1 for row in mine)
                for lower, mine in rows.items()}
    for row, lower in enumerate(a_device):
        if lower in same:
            continue  # as spread
        if row in kept:
            port, peer_port = kept[row]
        else:
            upper = b_device[row]
            port = a_port[row] if taken.free(lower, a_port[row]) else \
                taken.lowest(lower, first_up[lower])
            peer_port = b_port[row] if taken.free(upper, b_port[row]) else \
                taken.lowest(upper, 1)
            taken.take(lower, port)
            taken.take(upper, peer_port)
        columns[3][start + row], columns[5][start + row] = port, peer_port
    return moves


def _any_taken(taken: _Taken, lower: str, mine: list[int], a_port: list[str],
               b_device: list[str], b_port: list[str]) -> bool:
    """Whether a port of these cables is taken already (by a cable kept before them)."""
    return any(not taken.free(lower, a_port[row]) or not taken.free(b_device[row], b_port[row])
               for row in mine)


def _why_moved(taken: _Taken, lower: str, port: str, peer: str, peer_port: str,
               open_rows: dict[str, list[int]], mine: list[int],
               b_device: list[str]) -> str:
    """Why the design cannot keep this locked cable ('' when it can)."""
    if peer not in taken.ports:
        return f"{peer} is no longer a switch of the fabric"
    if peer not in open_rows:
        return f"the design no longer cables {lower} to {peer}"
    if not open_rows[peer]:
        uppers = list(dict.fromkeys(b_device[row] for row in mine))
        return (f"the design spreads {lower}'s {len(mine)} uplinks evenly over "
                f"{len(uppers)} switches: {sum(b_device[row] == peer for row in mine)} to "
                f"{peer}, fewer than the lock holds")
    for switch, its_port in ((lower, port), (peer, peer_port)):
        number = _number(its_port)
        if number is None or number > taken.ports[switch]:
            return f"{its_port} is not a port of {switch} ({taken.ports[switch]} ports)"
        if number <= taken.hosts.get(switch, 0):
            return f"{its_port} of {switch} is a host's port now"
        if not taken.free(switch, its_port):
            return f"{its_port} of {switch} is another cable's"
    return ""


def _number(port: str) -> int | None:
    return _NUMBERS.get(port)


class _Taken:
    """The ports in use on each switch: its hosts' (a leaf's first cages) and the cables'
    laid so far; and the lowest free one from a port on."""

    def __init__(self, ports: Mapping[str, int], hosts: Mapping[str, int]) -> None:
        self.ports, self.hosts = ports, hosts
        self.used: dict[str, set[int]] = {}
        self._from: dict[tuple[str, int], int] = {}  # (switch, first) -> lowest free so far

    def free(self, switch: str, port: str) -> bool:
        number = _number(port)
        return number is not None and self.hosts.get(switch, 0) < number <= \
            self.ports.get(switch, 0) and number not in self.used.get(switch, ())

    def take(self, switch: str, port: str) -> None:
        number = _number(port)
        if number is not None:
            self.used.setdefault(switch, set()).add(number)

    def lowest(self, switch: str, first: int) -> str:
        """The lowest free port from ``first`` on, else from port 1 (none free: the design
        has no room, which fabric sizing rules out)."""
        for low in (first, 1):
            number = self._from.get((switch, low), max(low, self.hosts.get(switch, 0) + 1))
            used = self.used.get(switch, set())
            while number in used:
                number += 1
            self._from[(switch, low)] = number
            if number <= self.ports[switch]:
                return PORT_NAMES[number]
        raise ValueError(f"{switch} has no free port for a cable the design lays")


def switch_links(links: Links, fabrics: Iterable[str]) -> Iterator[tuple[str, dict[str, str]]]:
    """Per fabric: each lower switch's links line text (its cables up), from the plan's
    link table (the lock's new lines)."""
    from_runs = _uplink_runs(links)
    for fabric in fabrics:
        picked = [(start, stop) for net, start, stop in from_runs if net == fabric]
        if picked:
            yield fabric, uplink_texts(*(
                [value for start, stop in picked for value in column[start:stop]]
                for column in (links.a_device, links.a_port, links.b_device, links.b_port)))


def _uplink_runs(links: Links) -> list[tuple[str, int, int]]:
    """(network, start, stop) of the link table's runs of switch-to-switch cables."""
    network, tier = links.network, links.tier
    return [(network[start], start, stop) for start, stop in runs(network, tier)
            if tier[start] in ("leaf-spine", "spine-core")]
