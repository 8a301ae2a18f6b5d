"""The shell writer: words, assignments and comments a POSIX shell reads back as written, and
``NAME=value`` lines for readers that take the rest of the line verbatim (env_line).

A line break or another control character is refused: a script's reader (and its reviewer)
should see one line per command.
"""

from __future__ import annotations

import re
import shlex

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def shell_word(value: object) -> str:
    """One POSIX shell word that the shell reads back as exactly ``value``: bare when it is
    made of safe characters, else single-quoted (shlex.quote). A line break or another control
    character is refused: a script's reader (and its reviewer) should see one line per command."""
    text = str(value)
    if _LINE_BREAKS.search(text):
        raise ValueError(f"shell word {text[:40]!r} holds a line break or control character")
    return shlex.quote(text)


def shell_assignment(name: str, value: object) -> str:
    """``NAME=word``: a variable assignment a POSIX shell (``set -a; . file``) reads back."""
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a shell variable name")
    word = shell_word(value)
    if word.startswith("="):  # NAME==x is right, but reads as a typo (shellcheck SC1097)
        word = "'" + word + "'"  # shlex left it bare: it holds no quote
    return f"{name}={word}"


def shell_comment(text: str) -> str:
    """``# text``, one line."""
    if _LINE_BREAKS.search(text):
        raise ValueError(f"shell comment {text[:40]!r} holds a line break or control character")
    return f"# {text}" if text else "#"


def env_line(name: str, value: object) -> str:
    """``NAME=value`` for a reader that takes the rest of the line verbatim (NCCL's nccl.conf:
    no quotes, no trimming): the value must be one line without surrounding blanks."""
    text = str(value)
    if not _ENV_NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a variable name")
    if _LINE_BREAKS.search(text) or text != text.strip():
        raise ValueError(f"{name}'s value {text[:40]!r} is not one line without outer blanks")
    return f"{name}={text}"
