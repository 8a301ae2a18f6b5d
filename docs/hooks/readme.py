"""MkDocs hook: a page's `<!-- readme: NAME -->` line becomes the README's section NAME.

The README marks the text it shares with the site (`<!-- docs: NAME -->` ...
`<!-- /docs: NAME -->`), so that text is written once: the first spec, what the tool does and
the commands table read the same on GitHub and on the site. Links into `docs/` are made
relative to the page; a section that is missing, or a link the site could not follow, fails the
build.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

DIRECTIVE = re.compile(r"^<!-- readme: ([\w-]+) -->$", re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _section(readme: str, name: str) -> str:
    match = re.search(rf"^<!-- docs: {name} -->\n(.*?)^<!-- /docs: {name} -->$", readme,
                      re.M | re.S)
    if not match:
        raise PluginError(f"README.md has no section marked '<!-- docs: {name} -->'")
    return match.group(1)


def _for_page(text: str, page_uri: str, name: str) -> str:
    """The section as the page shows it: links into docs/ made relative to the page, headings
    one level up (the README's `###` under its `##` is the page's `##` under its `#`)."""
    here = posixpath.dirname(page_uri) or "."

    def link(match: re.Match[str]) -> str:
        target = match.group(1)
        if re.match(r"[a-z]+://", target):
            return match.group(0)
        if not target.startswith("docs/"):
            raise PluginError(f"README section '{name}' links to {target!r}, which the site "
                              "cannot follow: link to a page under docs/ instead")
        return "](" + posixpath.relpath(target[len("docs/"):], here) + ")"

    lines, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        if not fence and re.match(r"#{3,} ", line):
            line = line[1:]
        lines.append(line)
    return LINK.sub(link, "\n".join(lines))


def on_page_markdown(markdown: str, page, config, files) -> str:
    if not DIRECTIVE.search(markdown):
        return markdown
    readme = (Path(config["config_file_path"]).parent / "README.md").read_text(encoding="utf-8")
    return DIRECTIVE.sub(lambda m: _for_page(_section(readme, m.group(1)),
                                             page.file.src_uri, m.group(1)), markdown)
