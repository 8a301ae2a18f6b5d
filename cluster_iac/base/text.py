"""What a spec string may never hold: control characters, and how to name one in a message."""

from __future__ import annotations

import re
import unicodedata

# C0 and C1 controls and DEL (Cc), the line and paragraph separators (Zl, Zp: YAML 1.1 and
# some editors break lines there), the bidirectional formatting characters that make a line
# read differently from what it holds ("Trojan Source", CVE-2021-42574), and what no UTF-8
# file or XML document can carry (lone surrogates, U+FFFE, U+FFFF).
CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069\ufeff\ud800-\udfff\ufffe\uffff]")

_NAMES = {"\n": "line feed", "\r": "carriage return", "\t": "tab", "\x00": "NUL",
          "\x1b": "escape", "\x0c": "form feed", "\x0b": "vertical tab", "\x7f": "delete",
          "\x85": "next line", "\ufeff": "zero-width no-break space"}


def control_character(text: str) -> tuple[int, str] | None:
    """(index, description) of the first control character in ``text``, or None."""
    match = CONTROL.search(text)
    if match is None:
        return None
    return match.start(), describe(match.group())


def describe(char: str) -> str:
    """'U+000A (line feed)': how a message names a character that does not print."""
    name = _NAMES.get(char) or unicodedata.name(char, "control character").lower()
    return f"U+{ord(char):04X} ({name})"
