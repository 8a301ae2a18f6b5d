"""Lustre directory layouts: an `lfs setstripe` script and the same layouts as JSON."""

from __future__ import annotations

import json
from typing import Any

from cluster_iac.emit import lustre_servers
from cluster_iac.emit.base import render_template
from cluster_iac.formats.shell import shell_comment, shell_word
from cluster_iac.plan import Plan
from cluster_iac.plan.lustre import DirectoryLayout, StripeComponent

_UNITS = (("T", 1 << 40), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10))


def render(plan: Plan) -> dict[str, str]:
    lustre = plan.lustre
    if lustre is None:
        return {}
    # every spec string reaches the script as one quoted word or inside one comment line
    directories = [{"path": shell_word(d.path), "args": setstripe_args(d),
                    "comment": shell_comment(f"{d.path} ({d.pattern}): {d.reason}")}
                   for d in lustre.directories]
    return {
        "lustre/setstripe.sh": render_template(
            "lustre/setstripe.sh.j2", lustre=lustre, directories=directories,
            osts_per_oss=(lustre.ost_count or 0) // (lustre.oss_count or 1)),
        "lustre/layouts.json": json.dumps(layouts_data(plan), indent=2, sort_keys=True) + "\n",
        **lustre_servers.render(plan),
    }


def size_text(size: int) -> str:
    """Bytes in the largest binary unit lfs reads that divides them: 1048576 -> '1M'."""
    for suffix, unit in _UNITS:
        if size >= unit and size % unit == 0:
            return f"{size // unit}{suffix}"
    return str(size)


def setstripe_args(layout: DirectoryLayout) -> str:
    """The options of `lfs setstripe` for a layout (without the path)."""
    if not layout.composite:
        only = layout.components[0]
        return f"-c {only.stripe_count} -S {size_text(only.stripe_size)}"
    return " ".join(_component_args(comp) for comp in layout.components)


def _component_args(comp: StripeComponent) -> str:
    end = "-1" if comp.end is None else size_text(comp.end)
    if comp.on_mdt:  # the DoM component's size is its end
        return f"-E {end} -L mdt"
    return f"-E {end} -c {comp.stripe_count} -S {size_text(comp.stripe_size)}"


def layouts_data(plan: Plan) -> dict[str, Any]:
    lustre = plan.lustre
    return {
        "fsname": lustre.fsname,
        "mount": lustre.mount,
        "oss_count": lustre.oss_count,
        "ost_count": lustre.ost_count,
        "directories": [{
            "path": d.path,
            "pattern": d.pattern,
            "reason": d.reason,
            "lfs_setstripe": setstripe_args(d),
            "components": [{
                "start": c.start, "end": c.end, "stripe_count": c.stripe_count,
                "stripe_size": c.stripe_size, "layout": "mdt" if c.on_mdt else "raid0",
            } for c in d.components],
        } for d in lustre.directories],
    }
