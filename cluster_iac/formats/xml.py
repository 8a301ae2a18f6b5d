"""The XML writer: documents from ElementTree elements (xml_text), comments, names and values.

Values are escaped, a character XML 1.0 cannot carry is refused, and a name is checked; with
``literal`` (for a reader such as NCCL's that decodes no entity) a value that would need an
escape is refused instead. formats/svg.py draws with xml_name, xml_value and xml_values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from xml.etree.ElementTree import Element

_XML_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# XML 1.0 cannot carry these at all, not even as a character reference (section 2.2).
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# A value with none of these is printed as it is (the usual case: one search, no substitution).
_XML_SPECIAL = re.compile('[&<>"\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')
_XML_NAMES: set[str] = set()  # names already checked (a document repeats a few names)
_XML_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;",
                "\n": "&#10;", "\r": "&#13;"}


def xml_text(root: Element, comment: str | None = None, *, literal: bool = False) -> str:
    """An XML document from an ElementTree element: one line per element with all its
    attributes (in insertion order), two-space indents, ``<x/>`` when empty, no declaration,
    an optional comment first. Values are escaped; with ``literal`` (a reader such as NCCL's
    that decodes no entity) a value that would need an escape is refused instead."""
    lines = [] if comment is None else [xml_comment(comment)]
    _xml_element(root, 0, lines, literal)
    return "\n".join(lines) + "\n"


def xml_comment(text: str) -> str:
    """``<!-- text -->``: a '--' inside (which ends a comment early in XML) is split by a space,
    and a space follows '<!--' (NCCL reads the first word as a tag name)."""
    _xml_chars(text)
    if "\n" in text or "\r" in text:
        raise ValueError(f"XML comment {text[:40]!r} holds a line break")
    while "--" in text:
        text = text.replace("--", "- -")
    return f"<!-- {text} -->"


def _xml_element(element: Element, indent: int, lines: list[str], literal: bool) -> None:
    pad = " " * indent
    attrs = _xml_attributes(element.attrib, literal) if element.attrib else ""
    head = f"{pad}<{_xml_name(element.tag)}{attrs}"
    text = _xml_value(element.text or "", literal) if element.text else ""
    children = list(element)
    if not children and not text:
        lines.append(head + "/>")
    elif not children:
        lines.append(f"{head}>{text}</{element.tag}>")
    else:
        lines.append(head + ">" + text)
        for child in children:
            _xml_element(child, indent + 2, lines, literal)
        lines.append(f"{pad}</{element.tag}>")


def _xml_attributes(attrib: Mapping[str, object], literal: bool) -> str:
    """' key="value"' of each attribute: the names checked against those seen, the values
    searched at once; one by one only where a value is not text or needs an escape (a
    drawing has a million attributes at 100,000 GPUs, nearly all plain)."""
    keys = list(attrib)
    if not _XML_NAMES.issuperset(keys):
        for key in keys:
            _xml_name(key)
    values = list(attrib.values())
    try:
        plain = not _XML_SPECIAL.search("".join(values))  # type: ignore[arg-type]
    except TypeError:  # a value that is not a str
        plain = False
    if plain:
        return "".join(map(' {}="{}"'.format, keys, values))
    return "".join(f' {k}="{_xml_value(v, literal)}"' for k, v in zip(keys, values,
                                                                          strict=True))


def xml_name(name: object) -> str:
    """``name`` if it is an XML name (a tag or an attribute's), else ValueError."""
    return _xml_name(name)


def xml_value(value: object) -> str:
    """``value`` as XML text or an attribute's value: escaped as xml_text escapes it (a
    character XML 1.0 cannot carry is refused)."""
    return _xml_value(value, False)


def xml_values(values: tuple[str, ...]) -> tuple[str, ...]:
    """Each of these strings as xml_value writes it: at once when none needs an escape (one
    search of them all, the usual case), else one by one."""
    if not _XML_SPECIAL.search("".join(values)):
        return values
    return tuple(_xml_value(value, False) for value in values)


def _xml_name(name: object) -> str:
    if name in _XML_NAMES:
        return name  # type: ignore[return-value]  # only str names are added
    if not isinstance(name, str) or not _XML_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not an XML name")
    _XML_NAMES.add(name)
    return name


def _xml_value(value: object, literal: bool) -> str:
    text = value if type(value) is str else str(value)
    if not _XML_SPECIAL.search(text):
        return text
    _xml_chars(text)
    escaped = re.sub('[&<>"\t\n\r]', lambda m: _XML_ESCAPES[m.group()], text)
    if literal and escaped != text:
        raise ValueError(f"XML value {text[:40]!r} would need an escape its reader does not "
                         "decode")
    return escaped


def _xml_chars(text: str) -> str:
    if _XML_FORBIDDEN.search(text):
        raise ValueError(f"XML text {text[:40]!r} holds a character XML 1.0 cannot carry")
    return text
