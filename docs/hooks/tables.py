"""MkDocs hook: a pipe in a table cell's code span, written `\\|` for GitHub, shown as `|`.

GitHub splits table cells at every unescaped pipe, code spans included, so the README and the
pages write `text\\|json`; Python-Markdown keeps code spans whole and would show the backslash.
"""

from __future__ import annotations

import re

CODE_SPAN = re.compile(r"`[^`\n]*`")


def on_page_markdown(markdown: str, page, config, files) -> str:
    lines, fence = [], False
    for line in markdown.split("\n"):
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("|"):
            line = CODE_SPAN.sub(lambda m: m.group(0).replace("\\|", "|"), line)
        lines.append(line)
    return "\n".join(lines)
