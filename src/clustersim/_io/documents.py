"""Loading YAML and JSON input documents, so every input file fails the same way: an `InputError` with the line.

JSON is chosen by the extension (`.json`, `.json.gz`) because the JSON parser gives exact positions; anything
else is read as YAML, which also reads JSON. Files may be gzipped (see `open_text`). The messages are
`invalid YAML: ...`, `invalid JSON: ...` (both with the line and column where known) and `cannot read the file: ...`.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from typing import NoReturn, TypeVar

import yaml
from yaml.reader import ReaderError

from clustersim._io.textfile import StrPath, open_text
from clustersim.errors import InputError

JSON_SUFFIXES = (".json", ".json.gz")
T = TypeVar("T")


def load_document(path: StrPath, *, allow_nan: bool = True) -> object:
    """The one document of a YAML or JSON file; `allow_nan=False` refuses JSON's NaN and Infinity constants."""
    if _is_json(path):
        constant = None if allow_nan else _refuse_constant
        return _parse(path, lambda text: json.loads(text, parse_constant=constant))
    return _parse(path, yaml.safe_load)


def load_documents(path: StrPath) -> list[object]:
    """Every document of a multi-document (`---` separated) YAML file; a JSON file is one document."""
    if _is_json(path):
        return [load_document(path)]
    return _parse(path, lambda text: list(yaml.safe_load_all(text)))


def _is_json(path: StrPath) -> bool:
    """Whether the file is read as JSON (by its extension)."""
    return str(path).lower().endswith(JSON_SUFFIXES)


def _parse(path: StrPath, parse: Callable[[str], T]) -> T:
    source = str(path)
    kind = "JSON" if _is_json(path) else "YAML"
    try:
        with open_text(path) as stream:
            text = stream.read()
    except (OSError, EOFError, zlib.error) as error:
        raise InputError(source, f"cannot read the file: {getattr(error, 'strerror', None) or error}") from None
    try:
        return parse(text)
    except json.JSONDecodeError as error:
        raise InputError(source, f"invalid JSON: {error.msg} (column {error.colno})", line=error.lineno) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = error.problem or error.context
        if mark is None:
            raise InputError(source, f"invalid YAML: {problem}") from None
        raise InputError(source, f"invalid YAML: {problem} (column {mark.column + 1})", line=mark.line + 1) from None
    except ReaderError as error:
        line = text.count("\n", 0, error.position) + 1
        raise InputError(source, f"invalid YAML: character #x{error.character:04x} is not allowed", line=line) from None
    except yaml.YAMLError as error:
        raise InputError(source, f"invalid YAML: {error}") from None
    except RecursionError:
        raise InputError(source, f"invalid {kind}: nested too deeply") from None
    except ValueError as error:  # a refused constant, an integer too long, an impossible YAML date
        raise InputError(source, f"invalid {kind}: {error}") from None


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not a number JSON allows")
