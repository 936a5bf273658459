from __future__ import annotations

import gzip
import math
from pathlib import Path

import pytest

from clustersim._io.documents import load_document, load_documents
from clustersim.errors import InputError


def test_yaml_error_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("name: x\nnodes: [1,\n  2\nother: 3\n")
    with pytest.raises(InputError, match=r"a\.yaml, line 4: invalid YAML: .* \(column \d+\)") as error:
        load_document(path)
    assert error.value.line == 4


def test_yaml_forbidden_character_gives_the_line(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("a: 1\nb: \x00\n")
    with pytest.raises(InputError, match=r"a\.yaml, line 2: invalid YAML: character #x0000 is not allowed"):
        load_document(path)


def test_json_error_gives_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"a": 1,\n  "b": ]\n}')
    with pytest.raises(InputError, match=r"a\.json, line 2: invalid JSON: Expecting value \(column 8\)"):
        load_document(path)


def test_gzipped_json_loads(tmp_path: Path) -> None:
    path = tmp_path / "a.json.gz"
    path.write_bytes(gzip.compress(b'{"a": [1, 2]}'))
    assert load_document(path) == {"a": [1, 2]}


def test_truncated_gzip_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_bytes(gzip.compress(b"a: 1\n" * 100)[:15])
    with pytest.raises(InputError, match=r"a\.yaml: cannot read the file: "):
        load_document(path)


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"missing\.yaml: cannot read the file: No such file"):
        load_document(tmp_path / "missing.yaml")


def test_nan_is_refused_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    path.write_text('{"a": NaN}')
    document = load_document(path)
    assert isinstance(document, dict) and math.isnan(document["a"])
    with pytest.raises(InputError, match=r"a\.json: invalid JSON: NaN is not a number JSON allows"):
        load_document(path, allow_nan=False)


@pytest.mark.parametrize("name, text", [("a.json", "[" * 100_000), ("a.yaml", "[" * 100_000)])
def test_deep_nesting_is_an_input_error(tmp_path: Path, name: str, text: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError, match=r"invalid (JSON|YAML): nested too deeply"):
        load_document(tmp_path / name)


def test_multi_document_yaml(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("kind: Pod\n---\nkind: Node\n---\n")
    assert load_documents(path) == [{"kind": "Pod"}, {"kind": "Node"}, None]
    (tmp_path / "b.json").write_text('{"kind": "Pod"}')
    assert load_documents(tmp_path / "b.json") == [{"kind": "Pod"}]
