"""A large file's text as the pieces it is written in: Chunks (made each time they are read),
whole (each file's text joined) and concatenated (chunks joined without holding the text twice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping


class Chunks:
    """A large file's text as the pieces it is made of, made each time they are read: the
    render writes them one by one (writer.StagedTree.write), so the text is never held whole,
    nor copied into one string (at 100,000 GPUs the cabling and NetBox cable files are 190
    MiB); ``text()`` is the whole text, for a caller that wants it (emit.render_all, a
    family's ``render``)."""

    __slots__ = ("_make",)

    def __init__(self, make: Callable[[], Iterable[str]]) -> None:
        self._make = make

    def __iter__(self) -> Iterator[str]:
        return iter(self._make())

    def text(self) -> str:
        return concatenated(self)


def whole(files: Mapping[str, str | Chunks]) -> dict[str, str]:
    """Each file's whole text (Chunks joined)."""
    return {path: text if isinstance(text, str) else text.text()
            for path, text in files.items()}


def concatenated(chunks: Iterable[str]) -> str:
    """The chunks as one text, appended about 8 Mi characters at a time. CPython grows a
    string that nothing else holds in place (a large one by mremap, without a copy), so the
    text is not held twice at its end, as a join of all its chunks would hold it; a block's
    chunks are joined first, so that the growth is a few appends (each would be a copy where a
    string cannot grow in place: at worst the cost of the one join, never quadratic)."""
    text = ""
    block: list[str] = []
    size = 0
    for chunk in chunks:
        block.append(chunk)
        size += len(chunk)
        if size >= BLOCK:
            text += "".join(block)
            block, size = [], 0
    text += "".join(block)
    return text


BLOCK = 1 << 23
