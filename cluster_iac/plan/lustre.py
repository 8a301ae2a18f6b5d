"""Lustre striping layouts per directory class, as the plan_lustre pass derives them."""

from __future__ import annotations

from dataclasses import dataclass

from cluster_iac.errors import SpecPath


@dataclass(frozen=True)
class StripeComponent:
    """One layout component: a byte range of the file and how it is striped."""

    start: int  # bytes
    end: int | None  # bytes; None = end of file
    stripe_count: int  # -1 = all OSTs, 0 = file system default
    stripe_size: int  # bytes
    on_mdt: bool = False  # Data-on-MDT component


@dataclass(frozen=True)
class DirectoryLayout:
    """The default layout of one directory tree."""

    path: str
    pattern: str
    reason: str
    components: tuple[StripeComponent, ...]
    spec_path: SpecPath

    @property
    def composite(self) -> bool:
        """A progressive file layout (``-E`` components) rather than a plain one."""
        return len(self.components) > 1 or self.components[0].on_mdt


@dataclass(frozen=True)
class LustrePlan:
    """A Lustre file system and its directory layouts."""

    fsname: str
    mount: str
    oss_count: int | None
    ost_count: int | None  # None when no OSS group is declared
    directories: tuple[DirectoryLayout, ...]
    spec_path: SpecPath
