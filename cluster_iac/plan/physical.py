"""The physical layer as flat tables: devices, links (before placement) and cables.

Links and cables are kept as a struct of arrays, one tuple per column, because a 100,000-GPU
cluster has half a million cables: a column is one pointer per cable, a row object would be
a hundred bytes more, and emitters join whole columns at C speed. ``rows()`` and ``row(i)``
give the same data one cable at a time, for code where clarity matters more than speed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, fields
from itertools import repeat
from operator import add, attrgetter, itemgetter
from typing import Any, NamedTuple

from cluster_iac.base.runs import runs


class Device(NamedTuple):
    """Anything racked that has a name: a node, a switch, a PDU or a power shelf (a row of
    plan.devices; a named tuple, as the other rows here, is made 4x faster than a frozen
    dataclass: 35,000 of them at 100,000 GPUs)."""

    name: str
    kind: str  # 'node' | 'switch' | 'pdu' (power shelves are racked like PDUs)
    role: str  # node role, switch '<network>-<tier>', 'pdu' or 'power-shelf'
    model: str  # node type, catalog switch key, PDU profile or power shelf model
    rack: str
    row: str
    u: int | None  # lowest rack unit; 0 for 0U devices (vertical PDUs)
    height_u: int
    position: str  # where a crew finds it in the rack: 'U09', or 'PDU-A' for a 0U PDU


def position(u: int | None, side: str = "") -> str:
    """A device's place in its rack as a label prints it: 'U09', 'PDU-A' (0U), or ''."""
    if u:
        return f"U{u:02d}"
    return f"PDU-{side}" if side else ""


class Link(NamedTuple):
    """One cable as a network builder plans it, before the devices are placed. The A end is
    the downstream one (the host, the lower switch); B is the switch or PDU it plugs into."""

    network: str  # 'compute' | 'storage' | 'management' | 'bmc'
    tier: str  # fabrics: 'node-leaf' | 'leaf-spine' | 'spine-core'; management networks: 'link'
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    speed_gbps: int
    link: str  # link layer: 'infiniband' | 'ethernet'


class Cable(NamedTuple):
    """One cable with both ends located, its medium and its length (a row of Cables)."""

    cable_id: str
    network: str  # link networks, and 'power' for PSU cords
    tier: str
    a_row: str
    a_rack: str
    a_u: int | None
    a_device: str
    a_port: str
    b_row: str
    b_rack: str
    b_u: int | None
    b_device: str
    b_port: str
    speed_gbps: int  # 0 for power cords
    link: str  # 'infiniband' | 'ethernet' | 'power'
    medium: str  # key of the cable catalog's medium
    transceivers: int  # optics the medium needs (two per optical link)
    estimated_m: float  # routed length estimate
    length_m: float  # the stocked length bought


class _Columns:
    """Shared behaviour of a column table: length, rows, one row."""

    _row: Any = tuple

    def __len__(self) -> int:
        return len(getattr(self, fields(self)[0].name))  # type: ignore[arg-type]

    def columns(self) -> tuple[tuple[Any, ...], ...]:
        return tuple(getattr(self, f.name) for f in fields(self))  # type: ignore[arg-type]

    def rows(self) -> Iterator[Any]:
        return map(self._row._make, zip(*self.columns(), strict=True))

    def row(self, i: int) -> Any:
        return self._row._make(column[i] for column in self.columns())


def link_ends(links: Links, networks: Iterable[str], tier: str | None = None,
              ) -> Iterator[tuple[str, str, str, str]]:
    """(network, A device, B device, B port) of the links of ``networks`` (and of ``tier``,
    when given): the builders lay each network's and tier's cables together, so only those
    runs of the table are read (a 100,000-GPU fabric has 469,250 rows in a few runs)."""
    wanted = set(networks)
    for start, stop in runs(links.network, links.tier):
        if links.network[start] in wanted and tier in (None, links.tier[start]):
            yield from zip(links.network[start:stop], links.a_device[start:stop],
                           links.b_device[start:stop], links.b_port[start:stop], strict=True)


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Links(_Columns):
    """Every data cable the network builders planned, column by column (see Link)."""

    _row = Link
    network: tuple[str, ...] = ()
    tier: tuple[str, ...] = ()
    a_device: tuple[str, ...] = ()
    a_port: tuple[str, ...] = ()
    b_device: tuple[str, ...] = ()
    b_port: tuple[str, ...] = ()
    speed_gbps: tuple[int, ...] = ()
    link: tuple[str, ...] = ()

    def rows(self) -> Iterator[Link]:
        return super().rows()  # type: ignore[no-any-return]

    def __add__(self, other: Links) -> Links:
        return Links(*(a + b for a, b in zip(self.columns(), other.columns(), strict=True)))


class LinkBuilder:
    """Columns being filled by a network builder, one append per cable."""

    def __init__(self) -> None:
        self.columns: tuple[list[Any], ...] = tuple([] for _ in fields(Links))
        (self._network, self._tier, self._a_device, self._a_port, self._b_device,
         self._b_port, self._speed, self._link) = (column.append for column in self.columns)

    def add(self, network: str, tier: str, a_device: str, a_port: str, b_device: str,
            b_port: str, speed_gbps: int, link: str) -> None:
        self._network(network)
        self._tier(tier)
        self._a_device(a_device)
        self._a_port(a_port)
        self._b_device(b_device)
        self._b_port(b_port)
        self._speed(speed_gbps)
        self._link(link)

    def freeze(self) -> Links:
        return Links(*(tuple(column) for column in self.columns))


@dataclass(frozen=True, eq=False, repr=False)
class Cables(_Columns):
    """Every cable of the cluster, column by column (see Cable): the fabrics', the management
    networks' and every PSU's power cord, planned once by compile/plan_cabling.py.

    An end's row, rack and U are its device's (``devices``), so they are columns made on
    demand, not stored: six columns of half a million cells each would be tens of megabytes
    and the time to fill them, for what the device table already says.
    """

    _row = Cable
    # Each cable's id up to its port (network prefix, rack, position: 'CF-su1-r1.U09.'); the
    # id is this and a_port. A column of a few thousand shared strings, where the ids would be
    # half a million new ones (35 MB and 0.05 s at 100,000 GPUs): the ids are made on demand
    # (cable_id), and the CSV writers print the two pieces side by side (formats.Joined).
    id_head: tuple[str, ...] = ()
    network: tuple[str, ...] = ()
    tier: tuple[str, ...] = ()
    a_device: tuple[str, ...] = ()
    a_port: tuple[str, ...] = ()
    b_device: tuple[str, ...] = ()
    b_port: tuple[str, ...] = ()
    speed_gbps: tuple[int, ...] = ()
    link: tuple[str, ...] = ()
    medium: tuple[str, ...] = ()
    transceivers: tuple[int, ...] = ()
    estimated_m: tuple[float, ...] = ()
    length_m: tuple[float, ...] = ()
    devices: Mapping[str, Device] = field(default_factory=dict)  # every end's device, by name
    # What readers derive from the columns (where runs end, whether CSV prints a column as it
    # is), kept for the next reader: the cabling and NetBox emitters run in one process and
    # print the same columns, each derivation tens of milliseconds at 100,000 GPUs.
    # (not an argument: a copy made with dataclasses.replace starts with its own, empty memo)
    memo: dict[Any, Any] = field(default_factory=dict, init=False)

    @property
    def cable_id(self) -> tuple[str, ...]:
        """Each cable's id, made the first time it is asked for (see id_head)."""
        found: tuple[str, ...] | None = self.memo.get("cable_id")
        if found is None:
            self.memo["cable_id"] = found = tuple(map(add, self.id_head, self.a_port))
        return found

    @property
    def a_row(self) -> tuple[str, ...]:
        return self._where(self.a_device, "row", "")

    @property
    def a_rack(self) -> tuple[str, ...]:
        return self._where(self.a_device, "rack", "")

    @property
    def a_u(self) -> tuple[int | None, ...]:
        return self._where(self.a_device, "u", None)

    @property
    def b_row(self) -> tuple[str, ...]:
        return self._where(self.b_device, "row", "")

    @property
    def b_rack(self) -> tuple[str, ...]:
        return self._where(self.b_device, "rack", "")

    @property
    def b_u(self) -> tuple[int | None, ...]:
        return self._where(self.b_device, "u", None)

    def _where(self, names: tuple[str, ...], attribute: str, missing: Any) -> tuple[Any, ...]:
        """One attribute of each named device (``missing`` for a name with no device): by one
        itemgetter over a plain dict, half the time of mapping its get, unless a name has
        none."""
        of = dict(zip(self.devices, map(attrgetter(attribute), self.devices.values()),
                      strict=True))
        if len(names) > 1:
            try:
                return itemgetter(*names)(of)  # type: ignore[no-any-return]
            except KeyError:
                pass
        return tuple(map(of.get, names, repeat(missing)))

    def columns(self) -> tuple[tuple[Any, ...], ...]:
        return tuple(getattr(self, name) for name in Cable._fields)

    def __len__(self) -> int:
        return len(self.network)

    def rows(self) -> Iterator[Cable]:
        return super().rows()  # type: ignore[no-any-return]

    def row(self, i: int) -> Cable:
        ends = []
        for name in (self.a_device[i], self.b_device[i]):
            d = self.devices.get(name)
            ends.append((d.row, d.rack, d.u) if d is not None else ("", "", None))
        (a_row, a_rack, a_u), (b_row, b_rack, b_u) = ends
        return Cable(self.id_head[i] + self.a_port[i], self.network[i], self.tier[i], a_row,
                     a_rack, a_u, self.a_device[i], self.a_port[i], b_row, b_rack, b_u,
                     self.b_device[i], self.b_port[i], self.speed_gbps[i], self.link[i],
                     self.medium[i], self.transceivers[i], self.estimated_m[i], self.length_m[i])


class Port(NamedTuple):
    """One cabled port: a network interface, a power inlet or a PDU outlet (a row of Ports)."""

    device: str
    port: str
    kind: str  # 'interface' | 'power-port' (a PSU inlet) | 'power-outlet'
    network: str
    link: str
    speed_gbps: int
    medium: str
    cable_id: str


@dataclass(frozen=True, eq=False, repr=False)
class Ports:
    """Both ends of every cable (see Port): the A ends in cable order, then the B ends.

    A view of the cable table, column by column on demand: the same cells twice over would
    cost a hundred megabytes at 100,000 GPUs.
    """

    cables: Cables = field(default_factory=Cables)

    def __len__(self) -> int:
        return 2 * len(self.cables)

    @property
    def device(self) -> tuple[str, ...]:
        return self.cables.a_device + self.cables.b_device

    @property
    def port(self) -> tuple[str, ...]:
        return self.cables.a_port + self.cables.b_port

    @property
    def kind(self) -> tuple[str, ...]:
        a_kind = {"power": "power-port"}
        b_kind = {"power": "power-outlet"}
        network = self.cables.network
        return (tuple(map(a_kind.get, network, repeat("interface")))
                + tuple(map(b_kind.get, network, repeat("interface"))))

    @property
    def network(self) -> tuple[str, ...]:
        return self.cables.network * 2

    @property
    def link(self) -> tuple[str, ...]:
        return self.cables.link * 2

    @property
    def speed_gbps(self) -> tuple[int, ...]:
        return self.cables.speed_gbps * 2

    @property
    def medium(self) -> tuple[str, ...]:
        return self.cables.medium * 2

    @property
    def cable_id(self) -> tuple[str, ...]:
        return self.cables.cable_id * 2

    def rows(self) -> Iterator[Port]:
        return map(Port._make, zip(self.device, self.port, self.kind, self.network, self.link,
                                   self.speed_gbps, self.medium, self.cable_id, strict=True))
