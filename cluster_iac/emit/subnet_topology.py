"""The planned topology file written straight from the plan's link columns, record by record.

The same text as ibnetdiscover.topology_text(plan.subnet.topology(...)), which stays the
plain version and the oracle (tests/test_subnet_manager.py compares the two on every
example): at 100,000 GPUs the file has 700,000 lines, and building a Topology of named
tuples first, then formatting it port by port, took seconds of CPU. Here each device's
quoted id and description are formatted once, each link's two lines once, and each switch's
lines land in a slot per port, so the records come out in port order without sorting. The
fabric's rows of plan.links are found once (render_chunks hands them to the header's count
too) and read as slices where they are one run (the builders lay a fabric's cables so), the
names are checked in one search (check_descriptions), the adapters' GUIDs are a list in
cabling order (plan.subnet.adapter_guids), each formatted in hex once, and a port's '[n]'
texts once per port name.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import chain

from cluster_iac.formats.ibnetdiscover import CA_GUID_BASE, check_descriptions, placeholder_guids
from cluster_iac.plan import Plan
from cluster_iac.plan.subnet import (
    adapter_guids,
    fabric_rows,
    node_guids,
    sm_hosts,
    switch_guids,
    switch_port,
)

RECORDS_PER_CHUNK = 512
"""Records joined into one piece of the file (a few hundred kB): fewer writes than one a
record, and never the whole 40 MB text at once."""


Adapters = tuple[list[str], list[int]]
"""A fabric's host adapters ('host port') in cabling order, and their placeholder node GUIDs
(fabric_adapters)."""


def fabric_adapters(plan: Plan, network: str,
                    rows: tuple[list[int], list[int]] | None = None) -> Adapters:
    """The fabric's host adapters ('host port', the topology's node descriptions) in cabling
    order, with the placeholder node GUID of each (ibnetdiscover.placeholder_guids): hashed
    once where partitions.conf lists them too (at 100,000 GPUs with a partition key over
    every host, 0.06 s of the family's 0.74 s)."""
    hosts = (rows or fabric_rows(plan, network))[0]
    links = plan.links
    names = _names(_picked(links.a_device, hosts), _picked(links.a_port, hosts))
    return names, placeholder_guids(names, CA_GUID_BASE)


def _names(devices: Sequence[str], ports: Sequence[str]) -> list[str]:
    """Each host adapter's node description, 'host port'."""
    return [f"{device} {port}" for device, port in zip(devices, ports, strict=True)]


def topology_chunks(plan: Plan, network: str, header: tuple[str, ...],
                    rows: tuple[list[int], list[int]] | None = None,
                    hashed: Adapters | None = None) -> Iterator[str]:
    """The topology file's text, in pieces (see the module docstring); ``rows`` the
    fabric's fabric_rows, and ``hashed`` its fabric_adapters, where the caller has them."""
    tier = plan.fabric_wiring[network].tier
    links = plan.links
    hosts, cabled = rows or fabric_rows(plan, network)  # host to switch, switch to switch
    h_device, h_port, h_switch, h_switch_port = (
        _picked(column, hosts)
        for column in (links.a_device, links.a_port, links.b_device, links.b_port))
    a_switch, a_port, b_switch, b_port = (
        _picked(column, cabled)
        for column in (links.a_device, links.a_port, links.b_device, links.b_port))
    switches = [name for level in ("leaf", "spine", "core")
                for name, t in tier.items() if t == level]
    ports = {s.name: s.ports for s in plan.switches}
    number = {name: switch_port(name) for name in {*h_switch_port, *a_port, *b_port}}
    check_descriptions(chain(dict.fromkeys(h_device), dict.fromkeys(h_port), switches))
    # host adapters, numbered in cabling order with the master's first (as topology())
    names = _names(h_device, h_port) if hashed is None else hashed[0]
    masters = sm_hosts(plan, network)[:1]
    mine = [k for k, device in enumerate(h_device) if device in masters] if masters else []
    order = (mine + [k for k, device in enumerate(h_device) if device not in masters]
             if mine else list(range(len(names))))
    # node GUIDs; each port GUID is its + 1
    ca_number = adapter_guids(plan, names, None if hashed is None else hashed[1],
                              (h_device, h_port))
    guids = dict(zip(switches, switch_guids(plan, switches), strict=True))
    if len({*ca_number, *guids.values()}) < len(ca_number) + len(guids):
        node_guids(plan, [names[k] for k in order], switches)  # names two that share one
    # each piece formatted once: a switch's quoted id and description, a port number's
    # '[n]\t' (a switch port's line starts with it) and '[n]' (after the far end's id)
    ref = {name: f'"S-{guids[name]:016x}"' for name in switches}
    tail = {name: f'\t\t# "{name}"' for name in switches}
    at = {port: f"[{n}]\t" for port, n in number.items()}
    end = {port: f"[{n}]" for port, n in number.items()}
    # each switch port's line, the far end after its number: a host's links at the switch
    # end, then each switch-to-switch link at its A end and at its B end
    ca_hex = [f"{guid:016x}" for guid in ca_number]  # '"H-<it>"' names the adapter
    ca_port = [f"{guid + 1:x}" for guid in ca_number]
    lines = [f'{at[n]}"H-{guid}"[1]({port})\t\t# "{name}"'
             for n, guid, port, name in zip(h_switch_port, ca_hex, ca_port, names, strict=True)]
    lines += [f"{at[an]}{ref[b]}{end[bn]}{tail[b]}"
              for an, b, bn in zip(a_port, b_switch, b_port, strict=True)]
    lines += [f"{at[bn]}{ref[a]}{end[an]}{tail[a]}"
              for bn, a, an in zip(b_port, a_switch, a_port, strict=True)]
    numbers = map(number.__getitem__, chain(h_switch_port, a_port, b_port))
    ends = (chain(h_switch, a_switch, b_switch), numbers)
    slots = {name: [""] * (ports[name] + 1) for name in switches}
    if not _placed(slots, *ends, lines):
        h_number, a_number, b_number = (list(map(number.__getitem__, column))
                                        for column in (h_switch_port, a_port, b_port))
        _refuse(zip(hosts, h_switch, h_number, strict=True),
                zip(cabled, a_switch, a_number, strict=True),
                zip(cabled, b_switch, b_number, strict=True), ports=ports)

    adapter_columns = (ca_hex, ca_port, names, h_switch, h_switch_port)

    def adapters(start: int, stop: int) -> str:
        # the records of order[start:stop]: in cabling order, slices of the columns
        at = order[start:stop]
        columns: list[Sequence[str]]
        if mine:
            columns = [list(map(column.__getitem__, at)) for column in adapter_columns]
        else:
            columns = [column[start:stop] for column in adapter_columns]
        return "".join([
            f'\n\ncaguid=0x{guid.lstrip("0") or "0"}\nCa\t1 "H-{guid}"\t\t# "{name}"\n'
            f'[1]({port})\t{ref[switch]}{end[n]}{tail[switch]}'
            for guid, port, name, switch, n in zip(*columns, strict=True)])

    def switch(name: str) -> str:
        guid = guids[name]
        lines = "\n".join(filter(None, slots[name]))
        return (f"\n\nswitchguid=0x{guid:x}({guid:x})\nSwitch\t{ports[name]} {ref[name]}"
                f"{tail[name]} enhanced port 0 lid 0 lmc 0\n{lines}")

    first = 1 if masters and order else 0
    yield "\n".join(f"# {line}" if line else "#" for line in header)
    yield adapters(0, first)
    for start in range(0, len(switches), RECORDS_PER_CHUNK):
        yield "".join(map(switch, switches[start:start + RECORDS_PER_CHUNK]))
    for start in range(first, len(order), RECORDS_PER_CHUNK):
        yield adapters(start, start + RECORDS_PER_CHUNK)
    yield "\n"


def _picked(column: Sequence[str], rows: list[int]) -> Sequence[str]:
    """The column's values in these rows (ascending): a slice where they are one run, as a
    fabric's links are in the builders' table."""
    if rows and rows[-1] - rows[0] + 1 == len(rows):
        return column[rows[0]:rows[-1] + 1]
    return [column[i] for i in rows]


def _placed(slots: dict[str, list[str]], devices: Iterable[str], numbers: Iterable[int],
            lines: Sequence[str]) -> bool:
    """Each line in its switch's slot for its port, so a record's lines come out in port
    order without sorting; False when a port is beyond its switch's or is cabled twice (as
    many slots filled as lines, counted once, or a slot past the end)."""
    try:
        for device, port, line in zip(devices, numbers, lines, strict=True):
            slots[device][port] = line
    except IndexError:
        return False
    return sum(len(held) - held.count("") for held in slots.values()) == len(lines)


def _refuse(*ends: Iterable[tuple[int, str, int]], ports: dict[str, int]) -> None:
    """The ValueError of the first switch port, in table order, that is beyond its switch's
    ports or cabled twice (each row's A end before its B end)."""
    seen: set[tuple[str, int]] = set()
    for _row, device, port in sorted(chain(*ends), key=lambda end: end[0]):
        if port > ports[device]:
            raise ValueError(f"{device} has no port {port}")
        if (device, port) in seen:
            raise ValueError(f"port {port} of {device} is cabled twice")
        seen.add((device, port))
    raise AssertionError("a switch port misplaced, yet none found")
