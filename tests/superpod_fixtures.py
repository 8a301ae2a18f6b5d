"""The SuperPOD example as NVIDIA's reference architecture builds its storage fabric, on NDR
InfiniBand: the example runs it on Ethernet (RoCE on SN4700), and tests about an InfiniBand
storage fabric (its sizing, its exporter, its switch names) start from this variant."""

from __future__ import annotations

from typing import Any


def infiniband_storage(data: dict[str, Any]) -> dict[str, Any]:
    """The example's spec data with its storage fabric on QM9700 InfiniBand and the platforms'
    own storage NICs (DGX H100: two NDR200 ports; Lustre servers: two NDR; head: one NDR200)."""
    data["fabric"]["storage"] = {"technology": "infiniband", "leaf_switch": "qm9700",
                                 "racks": "net-r[1-4]"}
    for name in ("dgx-h100", "head", "lustre"):
        data["node_types"][name].pop("nics", None)
    return data
