"""File formats as plugins: how readers say what they read, and how a file's format is recognised.

A format is recognised by its content first (files travel under all sorts of names: `log.txt`, `trace.gz`),
by its name's extension second (an empty file, say). Each reader is registered by name (see
`clustersim.workload.load.WORKLOAD_READERS`, `clustersim.platform.load.PLATFORM_READERS`); the loaders hold
no list of formats of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

from clustersim._io.textfile import StrPath, read_head
from clustersim.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class FileFormat(Generic[T]):
    """A format a reader reads: `label` and `details` describe it in errors ("SWF traces", "(.swf, ...)")."""

    label: str
    details: str
    read: Callable[..., T]
    """`read(path, **options)`: the file's content."""
    sniff: Callable[[str], bool]
    """Whether the file's first characters (BOM and leading blanks removed) are of this format."""
    suffixes: tuple[str, ...]
    """Extensions (lower case, `.gz` removed) that name this format when the content says nothing."""
    options: Mapping[str, object] = field(default_factory=dict)
    """Options only this format takes, with their defaults."""


def supported(formats: Iterable[FileFormat[T]]) -> str:
    return " and ".join(f"{f.label} {f.details}" for f in formats)


def recognise(formats: Mapping[str, FileFormat[T]], path: StrPath, kind: str) -> str:
    """The name of the format of the file at `path`, by content then by extension."""
    head = read_head(path).lstrip("\ufeff \t\r\n")
    for name, candidate in formats.items():
        if head and candidate.sniff(head):
            return name
    suffixes = [s.lower() for s in Path(path).suffixes[-2:]]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    for name, candidate in formats.items():
        if suffixes and suffixes[-1] in candidate.suffixes:
            return name
    raise InputError(str(path), f"unrecognised {kind}; supported: {supported(formats.values())}")


def format_options(
    formats: Mapping[str, FileFormat[T]], mine: FileFormat[T], path: StrPath, options: Mapping[str, object]
) -> dict[str, object]:
    """The options of `options` that format `mine` takes. None means not given; another format's option is an
    error unless it has that format's default value (so a command line can always pass its defaults)."""
    taken: dict[str, object] = {}
    for key, value in options.items():
        if value is None:
            continue
        if key in mine.options:
            taken[key] = value
            continue
        owners = [f for f in formats.values() if key in f.options]
        if any(f.options[key] == value for f in owners):
            continue
        labels = " and ".join(f.label for f in owners) or "no format"
        raise InputError(str(path), f"the '{key}' option applies to {labels} only, not {mine.label}")
    return taken
