"""A checker of NCCL's topology XML rules (src/graph/xml.cc, topo.cc at 2.30.7), for the tests.

It follows ../shared/reference/nccl/nccl_formats.md sections 1.2-1.5: NCCL's hand-written
tokenizer (no XML library), its limits, and the attributes ncclTopoGetSystemFromXml requires.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_NODES = 256  # NCCL_TOPO_XML_MAX_NODES; checked before each node, so 255 fit
MAX_ATTRS = 16  # MAX_ATTR_COUNT
MAX_STR = 253  # MAX_STR_LEN 255 buffer: 254 characters is already an error
MAX_SUBS_OLD = 32  # children per element up to NCCL 2.20
CHILDREN = {  # handler tables, xml.cc:344-407
    None: {"system"}, "system": {"cpu"}, "cpu": {"pci", "nic"},
    "pci": {"pci", "gpu", "nic", "pcilink"}, "gpu": {"nvlink", "c2c"}, "nic": {"net"},
}
BUSID = re.compile(r"^[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")
CPUMAP = re.compile(r"^[0-9a-f]{1,8}(,[0-9a-f]{8})*$")
LINK_SPEEDS = ("2.5 GT/s", "5 GT/s", "8 GT/s", "16 GT/s", "32 GT/s", "2.5 GT/s PCIe",
               "5.0 GT/s PCIe", "8.0 GT/s PCIe", "16.0 GT/s PCIe", "32.0 GT/s PCIe",
               "64.0 GT/s PCIe")
X86_VENDORS = ("GenuineIntel", "AuthenticAMD", "CentaurHauls", "  Shanghai  ")


class NcclXmlError(ValueError):
    """What NCCL would report as an XML parse error or a missing attribute."""


@dataclass
class Element:
    name: str
    attrs: dict[str, str]
    children: list[Element] = field(default_factory=list)

    def find(self, name: str) -> list[Element]:
        found = [self] if self.name == name else []
        for child in self.children:
            found += child.find(name)
        return found


class _Reader:
    """Character reader with NCCL's tokenizer rules."""

    def __init__(self, text: str):
        self.text, self.pos, self.nodes = text, 0, 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def next(self) -> str:
        char = self.peek()
        self.pos += 1
        return char

    def skip_blanks(self) -> None:  # only ' ', '\n' and '\r' between tags
        while self.peek() in (" ", "\n", "\r") and self.peek():
            self.pos += 1

    def word(self, stops: str) -> str:
        start = self.pos
        while self.peek() and self.peek() not in stops:
            self.pos += 1
        value = self.text[start:self.pos]
        if len(value) > MAX_STR:
            raise NcclXmlError(f"name or value longer than {MAX_STR} characters")
        return value


def parse(text: str) -> Element:
    """The <system> element, or NcclXmlError where NCCL's parser fails."""
    if any(ord(c) > 127 for c in text):
        raise NcclXmlError("non-ASCII bytes")
    reader = _Reader(text)
    root = Element("", {})
    _children(reader, root, None)
    systems = [child for child in root.children if child.name == "system"]
    if len(systems) != 1:
        raise NcclXmlError("expected exactly one <system>")
    return systems[0]


def _children(reader: _Reader, parent: Element, name: str | None) -> None:
    while True:
        reader.skip_blanks()
        char = reader.next()
        if char == "":
            if name is not None:
                raise NcclXmlError(f"end of file inside <{name}>")
            return
        if char != "<":
            raise NcclXmlError(f"expecting '<', got {char!r}")
        if reader.text.startswith("!--", reader.pos):
            _comment(reader)
            continue
        if reader.peek() == "/":
            reader.next()
            closing = reader.word(">")
            if reader.next() != ">" or closing != name:
                raise NcclXmlError(f"XML Mismatch : {name} / {closing}")
            return
        _element(reader, parent)


def _comment(reader: _Reader) -> None:
    reader.pos += 3
    # NCCL reads the text after '<!--' as a tag name first: it must start with a blank
    if reader.peek() not in (" ", "\n", "\r"):
        raise NcclXmlError("comment must have a blank after '<!--'")
    end = reader.text.find("-->", reader.pos)
    if end < 0:
        raise NcclXmlError("unterminated comment")
    reader.pos = end + 3


def _element(reader: _Reader, parent: Element) -> None:
    reader.nodes += 1
    if reader.nodes >= MAX_NODES:
        raise NcclXmlError(f"XML parser is limited to {MAX_NODES} nodes")
    name = reader.word(" />\n\r\t")
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
        raise NcclXmlError(f"bad element name {name!r}")
    attrs = _attributes(reader)
    element = Element(name, attrs)
    allowed = CHILDREN.get(parent.name or None, set())
    if name in allowed:
        parent.children.append(element)
    closer = reader.next()
    if closer == "/":
        if reader.next() != ">":
            raise NcclXmlError("expected '>' after '/'")
    elif closer == ">":
        _children(reader, element, name)
    else:
        raise NcclXmlError(f"XML Parse : expected >, got {closer!r}")


def _attributes(reader: _Reader) -> dict[str, str]:
    attrs: dict[str, str] = {}
    slots = 0
    while reader.peek() == " ":  # attributes only while the separator is one space
        reader.next()
        if reader.peek() in ("/", ">", " "):
            slots += 1  # an empty slot: harmless but counted
            continue
        key = reader.word("= />\n\r\t")
        if reader.next() != "=":
            raise NcclXmlError(f"expected '=' after {key!r}")
        quote = reader.next()
        if quote not in ("'", '"'):
            raise NcclXmlError("Expected (double) quote")
        value = reader.word(quote)
        if reader.next() != quote:
            raise NcclXmlError("unterminated value")
        attrs[key] = value
        slots += 1
    if slots > MAX_ATTRS:
        raise NcclXmlError(f"more than {MAX_ATTRS} attributes")
    return attrs


def check_topology(text: str) -> Element:
    """parse() plus the semantic rules for a static overlay (no devices filled in by sysfs)."""
    system = parse(text)
    if system.attrs.get("version") != "1":
        raise NcclXmlError("XML Topology has wrong version")
    for element in [system, *system.find("cpu"), *system.find("pci")]:
        if len(element.children) > MAX_SUBS_OLD:
            raise NcclXmlError(f"<{element.name}> has more than {MAX_SUBS_OLD} children")
    for cpu in system.children:
        _check_cpu(cpu)
    busids = [pci.attrs["busid"] for pci in system.find("pci")]
    if len(busids) != len(set(busids)):
        raise NcclXmlError("duplicate busid")
    return system


def _check_cpu(cpu: Element) -> None:
    attrs = cpu.attrs
    for key in ("numaid", "affinity", "arch"):
        if key not in attrs:
            raise NcclXmlError(f"Attribute {key} of node cpu not found")
    int(attrs["numaid"], 0)
    if not CPUMAP.match(attrs["affinity"]):
        raise NcclXmlError(f"affinity {attrs['affinity']!r} is not a cpumap hex mask")
    if attrs["arch"] not in ("x86_64", "arm64", "ppc64"):
        raise NcclXmlError(f"unknown arch {attrs['arch']!r}")
    if attrs["arch"] == "x86_64":
        if attrs.get("vendor") not in X86_VENDORS:
            raise NcclXmlError("x86 cpu needs a known vendor")
        if attrs["vendor"] == "GenuineIntel":
            int(attrs["familyid"], 0), int(attrs["modelid"], 0)
    for pci in cpu.find("pci"):
        _check_pci(pci)


def _check_pci(pci: Element) -> None:
    for key in ("busid", "class", "link_speed", "link_width"):
        if key not in pci.attrs:
            raise NcclXmlError(f"Attribute {key} of node pci not found")
    if not BUSID.match(pci.attrs["busid"]):
        raise NcclXmlError(f"busid {pci.attrs['busid']!r} is not DDDD:BB:DD.F lower-case hex")
    if not pci.attrs["class"].startswith("0x"):
        raise NcclXmlError("class must be sysfs hex (0x......)")
    if pci.attrs["link_speed"] not in LINK_SPEEDS:
        raise NcclXmlError(f"unknown link_speed {pci.attrs['link_speed']!r}")
    int(pci.attrs["link_width"], 0)
