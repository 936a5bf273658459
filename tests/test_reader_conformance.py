"""The reader conformance kit: every workload and platform reader passes the same hostile inputs.

Every registered format (`WORKLOAD_READERS`, `PLATFORM_READERS`) and the Kubernetes loaders either read each
input or refuse it with an InputError naming the file: never a traceback. Inputs: random bytes, an empty file,
a truncated gzip, huge numbers, non-UTF-8 text, a directory, a missing file. A new reader registered in those
registries is tested here without a line of test code; format-aware fuzzers stay next to each reader.
"""

from __future__ import annotations

import gzip
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clustersim.errors import InputError
from clustersim.kubernetes.sources import load_kube_platform, load_pod_workload
from clustersim.platform.load import PLATFORM_READERS
from clustersim.workload.load import WORKLOAD_READERS
from clustersim.workload.stream import Workload

Reader = Callable[[Path], object]

READERS: dict[str, Reader] = {
    **{f"workload {name}": fmt.read for name, fmt in WORKLOAD_READERS.items().items()},
    **{f"platform {name}": fmt.read for name, fmt in PLATFORM_READERS.items().items()},
    "kubernetes pods": load_pod_workload,
    "kubernetes nodes": load_kube_platform,
}

HOSTILE: dict[str, bytes] = {
    "empty": b"",
    "blank lines": b"\n\n  \n",
    "non-UTF-8": b"\xff\xfe\x80 job \x81\x82\n\xc3\x28\n",
    "truncated gzip": gzip.compress(b"1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n" * 200)[:300],
    "huge numbers": b"1e400 " * 18 + b"\n" + b"9" * 400 + b' {"nb_res": 1e400, "count": 1e400} <a speed="1e400"/>\n',
    "nested brackets": b"[" * 100 + b"{" * 100,
}


def _read(reader: Reader, path: Path) -> None:
    """Read everything, streaming workloads included; an InputError must name the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = reader(path)
            workload = getattr(result, "workload", result)
            if isinstance(workload, Workload):
                list(workload.jobs)
    except InputError as error:
        assert path.name in str(error), f"the error does not name the file: {error}"


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", HOSTILE)
def test_hostile_content_is_read_or_refused_naming_the_file(reader: str, case: str, tmp_path: Path) -> None:
    path = tmp_path / f"input-{case.replace(' ', '-')}{'.gz' if 'gzip' in case else ''}"
    path.write_bytes(HOSTILE[case])
    _read(READERS[reader], path)


@pytest.mark.parametrize("reader", READERS)
def test_a_directory_or_a_missing_file_is_an_input_error(reader: str, tmp_path: Path) -> None:
    for path in (tmp_path, tmp_path / "missing.txt"):
        with pytest.raises(InputError, match=path.name):
            _read_strictly(READERS[reader], path)


def _read_strictly(reader: Reader, path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = reader(path)
        workload = getattr(result, "workload", result)
        if isinstance(workload, Workload):
            list(workload.jobs)


@pytest.mark.parametrize("reader", READERS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), zipped=st.booleans())
def test_random_bytes_are_read_or_refused_naming_the_file(reader: str, data: bytes, zipped: bool,
                                                          tmp_path: Path) -> None:
    path = tmp_path / "fuzz.bin"
    path.write_bytes(b"\x1f\x8b" + data if zipped else data)
    _read(READERS[reader], path)
