"""MkDocs hook: the finding codes page, made from cluster_iac/codes.yaml at every build.

codes.yaml is what `cluster-iac explain CODE` prints, so the page cannot drift from it. Its
`# --- family ---` comment lines become the page's sections, each code a heading of its own
(so `codes.md#power-breaker` links to one code).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

PAGE = "codes.md"
FIELDS = (("means", None), ("formula", "Formula"), ("sources", "Sources"),
          ("fix", "How to fix it"))
REQUIRED = {"means", "fix"}
FAMILY = re.compile(r"^# --- (.+?) -+$")
CODE = re.compile(r"^([A-Z][A-Z0-9-]+):\s*$")


def _escaped(text: str) -> str:
    """Plain text as Markdown shows it verbatim; `code spans` are kept as they are."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):  # outside backticks
        part = html.escape(parts[i], quote=False)
        parts[i] = re.sub(r"([\\*_\[\]|#])", r"\\\1", part)
    return "`".join(parts)


def _families(text: str) -> list[tuple[str, list[str]]]:
    """(family title, its codes in file order), from the comment lines above the codes."""
    families: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        if match := FAMILY.match(line):
            title = re.sub(r"\s*\(.*\)$", "", match.group(1))
            families.append((title[:1].upper() + title[1:], []))
        elif match := CODE.match(line):
            if not families:
                raise PluginError(f"codes.yaml: {match.group(1)} comes before any '# --- family'")
            families[-1][1].append(match.group(1))
    return families


def page(codes_file: Path) -> str:
    text = codes_file.read_text(encoding="utf-8")
    entries = yaml.safe_load(text)
    families = _families(text)
    listed = [code for _, codes in families for code in codes]
    if sorted(listed) != sorted(entries):
        raise PluginError("codes.yaml: the codes found by line differ from the YAML's keys")
    out = ["# Finding codes", "",
           "Every finding the tool reports has a stable code. This page is made from",
           "`cluster_iac/codes.yaml` when the site is built; `cluster-iac explain CODE` prints the",
           "same entry and names the checks that report it. How a finding is printed:",
           "[Errors and exit codes](errors.md).", ""]
    out += ["| family | codes |", "|---|---|"]
    for title, codes in families:
        out.append(f"| [{_escaped(title)}](#{_slug(title)}) | {len(codes)} |")
    out.append("")
    for title, codes in families:
        out += [f"## {_escaped(title)}", ""]
        for code in codes:
            entry = entries[code]
            unknown = set(entry) - {key for key, _ in FIELDS}
            missing = REQUIRED - set(entry)
            if unknown or missing:
                raise PluginError(f"codes.yaml {code}: unknown keys {sorted(unknown)}, "
                                  f"missing {sorted(missing)}")
            out += [f"### {code}", ""]
            for key, label in FIELDS:
                if key in entry:
                    body = _escaped(" ".join(str(entry[key]).split()))
                    out += [f"**{label}.** {body}" if label else body, ""]
    return "\n".join(out)


def _slug(title: str) -> str:
    """MkDocs' (Python-Markdown toc's) id of a heading."""
    slug = re.sub(r"[^\w\s-]", "", title).strip().lower()
    return re.sub(r"[-\s]+", "-", slug)


def on_files(files, config):
    codes_file = Path(config["config_file_path"]).parent / "cluster_iac" / "codes.yaml"
    if files.get_file_from_path(PAGE) is not None:
        raise PluginError(f"docs/{PAGE} is generated from codes.yaml: remove the file")
    files.append(File.generated(config, PAGE, content=page(codes_file)))
    return files
