"""NCCL topology XML (NCCL_TOPO_FILE) of a node type, from the catalog's PCIe/NUMA layout."""

from __future__ import annotations

from typing import Any
from xml.etree.ElementTree import Element, SubElement

from cluster_iac.emit.base import GENERATED_BY
from cluster_iac.formats.xml import xml_text
from cluster_iac.plan import NodeTypePlan
from cluster_iac.plan.nccl import layout_describes_nics

# The sysfs link-speed strings NCCL's parser knows in their kernel >= 5.7 form ("NN.N GT/s
# PCIe", recognised since NCCL 2.11.4; src/graph/topo.cc kvDictPciGen).
LINK_SPEED = {3: "8.0 GT/s PCIe", 4: "16.0 GT/s PCIe", 5: "32.0 GT/s PCIe", 6: "64.0 GT/s PCIe"}
# PCI class codes (PCI Code and ID Assignment spec): bridge, 3D controller, InfiniBand, Ethernet.
CLASS_BRIDGE = "0x060400"
CLASS_GPU = "0x030200"
CLASS_NIC = {"infiniband": "0x020700", "ethernet": "0x020000"}
FAKE_SWITCH = "ffff:ff:{:02x}.0"  # ids absent from any host, as Azure, AWS and NVIDIA's notes use


def topology_xml(nt: NodeTypePlan) -> str:
    """The topology file: <system> -> <cpu> per NUMA node -> PCIe switch -> GPUs and NICs.
    NCCL's XML reader decodes no entity, so a value that would need one is refused."""
    system = Element("system", {"version": "1"})
    for cpu in cpu_elements(nt):
        cpu_element = SubElement(system, "cpu", dict(cpu["attrs"]))
        for switch in cpu["switches"]:
            switch_element = SubElement(cpu_element, "pci", dict(switch["attrs"]))
            for device in switch["devices"]:
                SubElement(switch_element, "pci", dict(device))
    comment = f"{GENERATED_BY} PCIe layout of catalog platform {nt.platform}."
    return xml_text(system, comment, literal=True)


def cpu_elements(nt: NodeTypePlan) -> list[dict[str, Any]]:
    """One <cpu> per NUMA node of the layout, its attributes in NCCL's dump order."""
    layout = nt.pcie
    nic = next(iter(nt.nics_of("compute")), None)
    with_nics = layout_describes_nics(nt)
    switch_number = 0
    cpus = []
    for numa in layout.numa_nodes:
        switches = []
        for switch in numa.switches:
            switch_number += 1
            devices = [_device(dev, layout, nic) for dev in switch.devices
                       if dev.kind == "gpu" or (with_nics and nic is not None)]
            busid = switch.busid or FAKE_SWITCH.format(switch_number)
            switches.append({"attrs": _pci(busid, CLASS_BRIDGE, layout.gen, layout.link_width),
                             "devices": devices})
        cpus.append({"attrs": _cpu_attrs(nt, numa.numaid), "switches": switches})
    return cpus


def _device(dev: Any, layout: Any, nic: Any) -> list[tuple[str, str]]:
    if dev.kind == "gpu":
        return _pci(dev.busid, CLASS_GPU, layout.gen, layout.link_width)
    return _pci(dev.busid, CLASS_NIC.get(nic.link, CLASS_NIC["ethernet"]),
                min(layout.gen, nic.pcie_gen), min(layout.link_width, nic.pcie_width))


def _pci(busid: str, pci_class: str, gen: int, width: int) -> list[tuple[str, str]]:
    return [("busid", busid), ("class", pci_class), ("link_speed", LINK_SPEED[gen]),
            ("link_width", str(width))]


def _cpu_attrs(nt: NodeTypePlan, numaid: int) -> list[tuple[str, str]]:
    attrs = [("numaid", str(numaid)), ("affinity", affinity_mask(nt, numaid)),
             ("arch", nt.cpu.arch)]
    if nt.cpu.arch == "x86_64":  # NCCL reads vendor, family and model on x86 only
        attrs += [("vendor", nt.cpu.vendor), ("familyid", str(nt.cpu.family)),
                  ("modelid", str(nt.cpu.model))]
    return attrs


def numa_cpus(nt: NodeTypePlan, numaid: int) -> list[int]:
    """Logical CPUs of a NUMA node, numbered as Linux does on x86: every physical core of
    every node first, then the SMT siblings in the same order."""
    layout = nt.pcie
    numa_total = nt.sockets * layout.numa_per_socket
    per_numa = layout.cores_per_numa or nt.sockets * nt.cores_per_socket // numa_total
    threads = layout.threads_per_core or nt.threads_per_core
    physical = per_numa * numa_total
    return [thread * physical + numaid * per_numa + core
            for thread in range(threads) for core in range(per_numa)]


def logical_cpus(nt: NodeTypePlan) -> int:
    layout = nt.pcie
    numa_total = nt.sockets * layout.numa_per_socket
    per_numa = layout.cores_per_numa or nt.sockets * nt.cores_per_socket // numa_total
    return per_numa * numa_total * (layout.threads_per_core or nt.threads_per_core)


def affinity_mask(nt: NodeTypePlan, numaid: int) -> str:
    """sysfs cpumap format: comma-separated 32-bit hex words, most significant first."""
    mask = sum(1 << cpu for cpu in numa_cpus(nt, numaid))
    words = max(1, -(-logical_cpus(nt) // 32))
    return ",".join(f"{(mask >> (32 * word)) & 0xFFFFFFFF:08x}"
                    for word in reversed(range(words)))
