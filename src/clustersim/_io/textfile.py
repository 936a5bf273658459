"""Opening input files as text, gzip-compressed or not, with errors that name the file.

Traces are often shipped gzipped under any name, so compression is recognised by its magic bytes, not by the
extension. Undecodable bytes are replaced rather than raised, so a binary file fails with the reader's own
"expected ..." message instead of a UnicodeDecodeError.
"""

from __future__ import annotations

import gzip
import io
import os
import zlib
from typing import TextIO

from clustersim.errors import InputError

GZIP_MAGIC = b"\x1f\x8b"
StrPath = str | os.PathLike[str]


def is_gzip(path: StrPath) -> bool:
    """Whether the file starts with the gzip magic bytes."""
    try:
        with open(path, "rb") as raw:
            return raw.read(2) == GZIP_MAGIC
    except OSError as error:
        raise InputError(str(path), f"cannot read the file: {error.strerror or error}") from None


def open_text(path: StrPath) -> TextIO:
    """Open a possibly gzipped file for reading text (UTF-8, undecodable bytes replaced)."""
    compressed = is_gzip(path)
    try:
        if compressed:
            return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8-sig", errors="replace")
        return open(path, encoding="utf-8-sig", errors="replace")
    except OSError as error:
        raise InputError(str(path), f"cannot read the file: {error.strerror or error}") from None


def open_binary(path: StrPath) -> io.BufferedIOBase:
    """Open a possibly gzipped file for reading bytes (for parsers that decode themselves, such as XML)."""
    compressed = is_gzip(path)
    try:
        return gzip.open(path, "rb") if compressed else open(path, "rb")
    except OSError as error:
        raise InputError(str(path), f"cannot read the file: {error.strerror or error}") from None


def read_head(path: StrPath, size: int = 4096) -> str:
    """The first `size` characters of the (decompressed) text, to recognise a format by its content."""
    try:
        with open_text(path) as text:
            return text.read(size)
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(str(path), f"cannot read the file: {error}") from None
