"""formats/yaml_template.py: a value's YAML laid out once with slots, then filled per use, is
byte for byte what yaml_text writes of the filled value, at any depth, beside plain values of
any kind and hostile strings included (emit/ansible.py writes the inventory's ``roce_rails``
so; tests/test_rails_playbook.py holds the inventory to its plain form too)."""

from __future__ import annotations

import pytest

from cluster_iac.formats.yaml import yaml_text
from cluster_iac.formats.yaml_template import Slot, YamlTemplate, yaml_pieces

HOSTILE = ["'", '"', "\\", "\n", "a\r\nb", "%", "%s", "%(x)s", "%%", "\x00", "\u2028", "é",
           "\U0001f600", "", " ", "- x", "key: value", "#", "yes", "null", "10.254.0.1/31",
           "1e3", "0x1f", "12:30", "~", "yamlslot0", "&a", "*a", "! tag", "\t"]


def _shape(strings: list[str] | None, slots: int = 8) -> dict[str, object]:
    """A value with every kind yaml_text writes, its strings (or Slots) nested in dicts and
    lists; constants with '%' and odd characters beside them."""
    value = iter(strings if strings is not None else [Slot(n) for n in range(slots)])
    return {"z": next(value), "a%s": [next(value), {"%": next(value), "k": [next(value)]}],
            "é": {"b": 1, "a": -2.5, "c": True, "d": None, "e": [], "f": {}},
            "m": ["%d", 7, [next(value), "const %s"]],
            "x": {"y": [{"p": next(value), "q": 3}, {"p": next(value), "q": 4}],
                  "w": next(value)}}


@pytest.mark.parametrize("start", range(0, len(HOSTILE), 4))
def test_a_filled_template_is_what_yaml_text_writes(start: int) -> None:
    strings = (HOSTILE * 2)[start:start + 8]
    template = YamlTemplate(_shape(None))
    filled = template.fill(strings)
    assert filled.plain() == _shape(strings)
    for document in ({"one": filled}, {"h": {"a": 1, "deep": {"er": filled}}},
                     {"l": [filled, "x"]}):
        assert yaml_text(document) == yaml_text(_plain(document))


def test_a_column_of_fills_is_each_one_written_alone() -> None:
    """Many like records, each with its own fill (the inventory's hosts): the writer's
    column of them, as the plain records give."""
    template = YamlTemplate({"rdma0": {"addresses": [Slot(0)], "mtu": 9000,
                                       "routes": [{"to": "10.0.0.0/8", "via": Slot(1)}]}})
    other = YamlTemplate([Slot(1), Slot(0)])
    hosts = {f"h{n}": {"rack": "r1", "rails": template.fill([HOSTILE[n], f"10.0.0.{n}"])}
             for n in range(len(HOSTILE))}
    hosts["odd"] = {"rack": "r2", "rails": other.fill(["a", "b"])}
    hosts["none"] = {"rack": "r3"}
    assert yaml_text({"all": {"hosts": hosts}}) == yaml_text(_plain({"all": {"hosts": hosts}}))


def test_slots_must_be_numbered_once_each_and_filled_with_strings() -> None:
    with pytest.raises(ValueError, match="each once"):
        YamlTemplate([Slot(0), Slot(0)])
    with pytest.raises(ValueError, match="2 strings for a template of 1"):
        YamlTemplate([Slot(0)]).fill(["a", "b"])
    with pytest.raises(TypeError):
        yaml_text({"k": YamlTemplate([Slot(0)]).fill([3])})  # type: ignore[list-item]
    with pytest.raises(ValueError, match="in a constant"):
        yaml_text({"k": YamlTemplate(["yamlslot0z", Slot(0)]).fill(["a"])})


def _plain(value: object) -> object:
    """The value with each fill replaced by what it stands for."""
    if hasattr(value, "plain"):
        return value.plain()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


@pytest.mark.parametrize("size", [1, 2, 3, 5, 100])
def test_a_document_in_pieces_is_what_yaml_text_writes(size: int) -> None:
    """yaml_pieces cuts large mappings and lists into slices of ``size`` entries (at any
    depth, beside small values, hostile keys and strings, empty blocks and fills), and the
    pieces joined are yaml_text's text of the document, header included."""
    template = YamlTemplate(_shape(None))
    fills = [template.fill((HOSTILE * 2)[n:n + 8]) for n in range(0, len(HOSTILE), 3)]
    hosts = {name: {"v": value, "n": n} for n, (name, value) in enumerate(
        zip(HOSTILE, reversed(HOSTILE), strict=True))}
    document: dict[str, object] = {
        "all": {"vars": {"a": 1, "b": "yes"}, "hosts": hosts,
                "children": {h or "x": {"hosts": dict.fromkeys(HOSTILE[:n])}
                             for n, h in enumerate(HOSTILE)}},
        "%s": [], "e": {}, "n": None, "list": [*HOSTILE, [1, 2, 3], {"k": "v"}, *fills],
        "deep": {"er": {"est": list(range(7)), "x": "'"}}, "small": {"a": [1]},
        "tuple": tuple(HOSTILE)}
    for header in ((), ("generated", "by: x")):
        pieces = list(yaml_pieces(document, header, size))
        assert "".join(pieces) == yaml_text(document, header)
        # nothing larger than 100 entries: the header and the document whole
        assert len(pieces) > len(HOSTILE) // size if size < 10 else len(pieces) == 2
    assert "".join(yaml_pieces({}, ("h",), size)) == yaml_text({}, ("h",))
    assert "".join(yaml_pieces({"a": []}, (), size)) == yaml_text({"a": []})
