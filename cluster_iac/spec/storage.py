"""Shared storage: Lustre servers and directory classes."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from cluster_iac.spec.base import AbsPath, Name, PositiveFloat, PositiveInt, SpecModel

AccessPattern = Literal["dataset", "checkpoint", "scratch", "home", "small-files"]


class LayoutComponent(SpecModel):
    """One progressive-file-layout component (``lfs setstripe -E``)."""

    end: str
    """Component end: a size such as '64M' or '1G', or 'eof' for the last one."""
    stripe_count: int
    """Stripe count (-1 = all OSTs)."""
    stripe_size: str = "1M"
    """Stripe size, a multiple of 64K."""
    on_mdt: bool = False
    """Data-on-MDT: keep this (first) component on the metadata target (``-L mdt``)."""


class DirectoryClass(SpecModel):
    """A directory tree with one access pattern."""

    path: AbsPath
    """Absolute path on the client (under the Lustre mount)."""
    pattern: AccessPattern
    """How jobs use it; picks the default layout."""
    stripe_count: int | None = None
    """Override: plain stripe count (-1 = all OSTs)."""
    stripe_size: str | None = None
    """Override: stripe size, e.g. '4M'."""
    components: list[LayoutComponent] | None = None
    """Override: explicit progressive file layout."""


class Lustre(SpecModel):
    """A Lustre file system."""

    fsname: str = Field(pattern=r"^[a-z0-9_]{1,8}$")
    """File system name (at most 8 characters)."""
    mount: AbsPath = "/lustre"
    """Client mount point."""
    mds_group: Name | None = None
    """Node group of the metadata servers."""
    oss_group: Name | None = None
    """Node group of the object storage servers."""
    osts_per_oss: PositiveInt = 2
    """OSTs each OSS serves."""
    read_gbs: PositiveFloat
    """Aggregate sustained read bandwidth, GB/s."""
    write_gbs: PositiveFloat
    """Aggregate sustained write bandwidth, GB/s."""
    capacity_tb: PositiveFloat | None = None
    """Usable capacity, TB."""
    directories: list[DirectoryClass] = []
    """Directory classes and their layouts."""


class Storage(SpecModel):
    """Shared storage."""

    lustre: Lustre | None = None
    """The Lustre file system."""
