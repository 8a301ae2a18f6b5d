"""The OSS's RAID engine: what computes the OSTs' parity, and how fast, per server.

Software RAID (Linux md, what the generated setup builds with mdadm):
- A RAID 5/6 full-stripe write computes parity over every data byte. The kernel measures its
  parity routines at boot, on one core over cache-hot pages, and prints each
  (lib/raid6/algos.c, ``raid6: avx2x4 gen() NNNNN MB/s``: MB there is 2^20 bytes of data per
  second). PARITY_MIBS_PER_CORE holds the fastest published figure per CPU architecture, so
  that the term stays an upper bound: a server's real md write path also copies each page
  into the stripe cache, and is slower.
- md handles an array's stripes, parity included, in the array's one raid5d thread unless
  its ``group_thread_cnt`` is set (Linux drivers/md/raid5.c; commit b721420e8719 "raid5:
  sysfs entry to control worker thread number": 0, the default, "disable[s] workqueue
  offload handling of stripes"); the generated setup leaves it at 0. So one server computes
  parity on at most min(its cores, its RAID 5/6 OSTs) cores at once.
- Reads of a healthy array compute no parity: md sends a read that fits a chunk straight to
  its drive, splitting larger ones at chunk boundaries (raid5.c, chunk_aligned_read), so the
  software term limits writes only. (A degraded array rebuilds data from parity on reads:
  not the bound, which assumes every drive is up.)
- RAID 0, 1 and 10 have no parity: no term.

Hardware RAID controllers and declustered RAID appliances declare their per-server write
(and read) figures in storage.lustre.raid_engine: they replace the software term.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MIB = 1 << 20
BYTES_PER_GB = 10**9
PARITY_RAID = ("raid5", "raid6")
PARITY_MIBS_PER_CORE = {"x86_64": 54_210}
"""raid6 gen() per core, MiB/s, by CPU architecture: x86_64 from the fastest of the figures
posted to linux-raid by Paul Menzel, "Re: OT: Processor recommendation for RAID6" (2 Apr 2021,
Message-ID <b5eb567d-9866-8f0f-ea61-83ae97d4d21f@molgen.mpg.de>): Intel Xeon W-2145 at
3.7 GHz, ``raid6: using algorithm avx512x4 gen() 54210 MB/s`` (the same post: Xeon E5-2687W v3
avx2x4 29847 MB/s, AMD EPYC 7601 avx2x4 20726 MB/s). No figure is held for other
architectures (arm64's published NEON figures are from cores a decade older than the
catalog's): the term is then not derived, and the report says so."""
SOURCE = ("Linux lib/raid6/algos.c boot benchmark, raid6 gen() per core: linux-raid, "
          "P. Menzel, 'Re: OT: Processor recommendation for RAID6', 2021-04-02 (Xeon W-2145 "
          "avx512x4 54210 MB/s); md raid5d, one thread per array (group_thread_cnt 0)")


# Records without generated __eq__/__repr__ (eq=False, repr=False): see plan/model.py.
@dataclass(frozen=True, eq=False, repr=False)
class Engine:
    """One OSS's RAID engine: what it is and what it moves, GB/s (None: not a limit)."""

    kind: str  # 'software' | 'hardware' | 'declustered'
    read_gbs: float | None
    write_gbs: float | None
    threads: int | None = None  # software: cores computing parity at once
    per_core_gbs: float | None = None  # software: parity per core


def software(arch: str, cores: int, raids: list[str]) -> Engine:
    """Linux md on the server's CPUs: per-core parity x min(cores, RAID 5/6 arrays) for
    writes; no term for reads (see the module's docstring)."""
    arrays = sum(1 for raid in raids if raid in PARITY_RAID)
    mibs = PARITY_MIBS_PER_CORE.get(arch)
    if not arrays or mibs is None:
        return Engine("software", None, None)
    per_core = mibs * MIB / BYTES_PER_GB
    threads = min(cores, arrays)
    return Engine("software", None, per_core * threads, threads, per_core)


def declared(kind: str, read_gbs: float | None, write_gbs: float | None) -> Engine:
    """A hardware or declustered RAID engine at its declared per-server figures."""
    return Engine(kind, read_gbs, write_gbs)


def describe(engines: Mapping[str, Engine]) -> str:
    """The OSSs' engine kind, and for software the cores each computes parity on."""
    first = next(iter(engines.values()), None)
    if first is None or first.kind != "software":
        return first.kind if first is not None else "software"
    threads = sorted({e.threads for e in engines.values() if e.threads is not None})
    return ("software" if not threads else
            f"software, {'/'.join(map(str, threads))} core(s) per server")


def cap_by_engine(value: float | None, cap: float | None) -> float | None:
    """A server's drives capped by its RAID engine (None: no limit from that side)."""
    if cap is None:
        return value
    return cap if value is None else min(value, cap)
