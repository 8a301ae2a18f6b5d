"""Durations of the scheduling policy: read with an explicit unit, written in the unit Slurm reads.

Slurm reads a bare number in a different unit from key to key: PriorityCalcPeriod counts minutes,
HealthCheckInterval and GraceTime seconds, PriorityDecayHalfLife and MaxWall a time string whose
bare number is minutes. The seed guide's ``PriorityCalcPeriod=3600`` meant an hour and gave 60
hours. So the spec takes a duration only with its unit (``90s``, ``5m``, ``1h``, ``7d``, ``2w``)
or in Slurm's dashed/coloned forms (``7-00:00:00``, ``04:00:00``, ``30:00``), and the emitters
convert it; a bare number is refused with the unit the key would have read it in.
"""

from __future__ import annotations

import re

UNIT_SECONDS = {"s": 1, "m": 60, "min": 60, "h": 3600, "d": 86400, "w": 604800}
_WITH_UNIT = re.compile(r"(\d+)\s*(s|min|m|h|d|w)")
# Slurm's time formats with a separator: days-hours[:minutes[:seconds]], hours:minutes:seconds,
# minutes:seconds (slurm.conf(5) MaxTime; sacctmgr(1) MaxWall reads the same)
_DASHED = re.compile(r"(\d+)-(\d+)(?::(\d+))?(?::(\d+))?")
_COLONED = re.compile(r"(\d+):(\d+)(?::(\d+))?")
_SLURM_LIMIT = re.compile(r"(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?")
UNLIMITED = ("INFINITE", "UNLIMITED")
MAX_SECONDS = 100 * 365 * 86400
"""The longest duration: 100 years, longer than any cluster lives and within Slurm's 32-bit
time fields (seconds run to 136 years, MaxTime's and MaxWall's minutes to 8,171)."""
MAX_CHARS = 32
"""A duration is written in at most 32 characters ('36500-00:00:00' takes 14); longer text is
refused before any number in it is read."""
FORMATS = "a number with its unit (90s, 5m, 1h, 7d, 2w) or Slurm's D-HH:MM:SS, HH:MM:SS, MM:SS"


class DurationError(ValueError):
    """A duration the spec cannot mean unambiguously; the message says why."""


def seconds(value: str | int, *, slurm_unit: str, unlimited: bool = False) -> int | None:
    """The duration in seconds; None for INFINITE/UNLIMITED where ``unlimited`` allows it.

    ``slurm_unit`` names the unit Slurm reads a bare number in for this key ('minutes' or
    'seconds'): the error for a bare number says what Slurm would have made of it.
    """
    text = str(value).strip()
    if len(text) > MAX_CHARS:
        raise DurationError(f"'{text[:MAX_CHARS]}...' is {len(text):,} characters long; a "
                            f"duration takes at most {MAX_CHARS}")
    total = _read(value, text, slurm_unit, unlimited)
    if total is not None and total > MAX_SECONDS:
        raise DurationError(f"'{text}' is longer than 100 years, the longest duration the spec "
                            "takes")
    return total


def time_limit_seconds(text: str) -> int | None:
    """A partition MaxTime in seconds as Slurm reads it (slurm.conf(5): MM, MM:SS, HH:MM:SS,
    D-HH, D-HH:MM, D-HH:MM:SS; no field is capped, so 90:30 is 90 minutes 30 seconds); None
    for INFINITE/UNLIMITED; DurationError when it is not one or is longer than 100 years."""
    bare = text.strip()
    if len(bare) > MAX_CHARS:
        raise DurationError(f"'{bare[:MAX_CHARS]}...' is {len(bare):,} characters long; a "
                            f"duration takes at most {MAX_CHARS}")
    if bare.upper() in UNLIMITED:
        return None
    match = _SLURM_LIMIT.fullmatch(bare)
    if match is None:
        raise DurationError(f"'{bare}' is not a Slurm time limit")
    days, first, second, third = (int(g) if g is not None else None for g in match.groups())
    if days is not None:  # D-HH[:MM[:SS]]
        total = days * 86400 + (first or 0) * 3600 + (second or 0) * 60 + (third or 0)
    elif third is not None:  # HH:MM:SS
        total = (first or 0) * 3600 + (second or 0) * 60 + third
    else:  # MM[:SS]
        total = (first or 0) * 60 + (second or 0)
    if total > MAX_SECONDS:
        raise DurationError(f"'{bare}' is longer than 100 years, the longest duration the spec "
                            "takes")
    return total


def _read(value: str | int, text: str, slurm_unit: str, unlimited: bool) -> int | None:
    if text.upper() in UNLIMITED:
        if unlimited:
            return None
        raise DurationError(f"'{text}' is not allowed here: give a finite duration")
    if isinstance(value, int) or text.isdigit():
        raise DurationError(_bare_number(int(text), slurm_unit))
    match = _WITH_UNIT.fullmatch(text)
    if match:
        return int(match.group(1)) * UNIT_SECONDS[match.group(2)]
    match = _DASHED.fullmatch(text)
    if match:
        days, hours, minutes, secs = (int(g or 0) for g in match.groups())
        return _checked(days * 86400, hours, minutes, secs, text)
    match = _COLONED.fullmatch(text)
    if match:
        first, second, third = match.groups()
        if third is None:  # MM:SS
            return _checked(0, 0, int(first), int(second), text)
        return _checked(0, int(first), int(second), int(third), text)
    raise DurationError(f"'{text}' is not a duration: write {FORMATS}")


def _checked(base: int, hours: int, minutes: int, secs: int, text: str) -> int:
    if minutes > 59 or secs > 59:
        raise DurationError(f"'{text}': minutes and seconds run to 59")
    return base + hours * 3600 + minutes * 60 + secs


def _bare_number(number: int, slurm_unit: str) -> str:
    """Why a bare number is refused, with what Slurm would have read."""
    read = number * (60 if slurm_unit == "minutes" else 1)
    return (f"{number} has no unit: Slurm reads this key in {slurm_unit}, so {number} would "
            f"mean {human(read)}; write the unit you mean (e.g. '{number}s' or '{number}m')")


def human(total: int) -> str:
    """3600 -> '1 hour', 216000 -> '60 hours', 90 -> '90 seconds'."""
    for unit, size in (("week", 604800), ("day", 86400), ("hour", 3600), ("minute", 60)):
        if total >= size and total % size == 0:
            count = total // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    if total >= 3600 and total % 60 == 0:
        return f"{total // 60} minutes"
    return f"{total} second{'s' if total != 1 else ''}"


def slurm_time(total: int | None) -> str:
    """Seconds as Slurm's D-HH:MM:SS (INFINITE for None), the form `scontrol` prints back."""
    if total is None:
        return "INFINITE"
    days, rest = divmod(total, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    clock = f"{hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{days}-{clock}" if days else clock
