"""serve-k8s against hostile traffic on loopback: malformed request lines, deep JSON, huge bodies, idle and
slowloris connections, too many connections, and bindings that name another pod; it answers each cleanly and
keeps serving."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods
from clustersim.kubernetes import api as api_module
from clustersim.limits import MAX_BODY_BYTES
from clustersim.workload.stream import Workload


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[KubeSession, int]]:
    """A facade with 2 pending pods on 2 nodes, short deadlines and 8 connection slots; stopped afterwards."""
    monkeypatch.setattr(api_module, "HEADER_TIMEOUT", 1.0)
    monkeypatch.setattr(api_module, "IDLE_TIMEOUT", 1.5)
    monkeypatch.setattr(api_module, "MAX_CONNECTIONS", 8)
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=2)))
    session = KubeSession(batkube_platform(nodes=2), pods, tmp_path / "out", TimeControl(deadlock_timeout=30), port=0)
    session.start()
    try:
        yield session, session.server.port
    finally:
        session.stop()


def _exchange(port: int, data: bytes, timeout: float = 5.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks) and _complete(b"".join(chunks)):
                break
        return b"".join(chunks)


def _complete(response: bytes) -> bool:
    head, _, body = response.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) >= int(line.split(b":")[1])
    return False


def _status(response: bytes) -> int:
    return int(response.split(b" ", 2)[1])


def _healthy(port: int) -> None:
    response = _exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert _status(response) == 200 and response.endswith(b"ok")


@pytest.mark.parametrize("line", [b"GARBAGE\r\n\r\n", b"GET /\r\n\r\n", b"\x00\xff\xfe junk HTTP/9\r\n\r\n",
                                  b"GET / HTTP/1.1 extra\r\n\r\n"])
def test_a_malformed_request_line_gets_400_without_a_server_traceback(
    server: tuple[KubeSession, int], line: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    _, port = server
    assert _status(_exchange(port, line)) == 400
    _healthy(port)
    assert "Traceback" not in capsys.readouterr().err


def _post(port: int, path: str, body: bytes, extra: str = "") -> bytes:
    head = (f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode()
    return _exchange(port, head + body)


def test_deeply_nested_json_is_a_400_not_a_dropped_connection(server: tuple[KubeSession, int]) -> None:
    _, port = server
    for depth in (200, 100_000):
        response = _post(port, "/api/v1/namespaces/default/pods", b"[" * depth + b"]" * depth)
        assert _status(response) == 400 and b"nested deeper" in response
    _healthy(port)


def test_a_body_over_the_limit_is_refused_before_it_is_read(server: tuple[KubeSession, int]) -> None:
    _, port = server
    head = (f"POST /api/v1/namespaces/default/pods HTTP/1.1\r\nHost: x\r\n"
            f"Content-Length: {MAX_BODY_BYTES + 1}\r\n\r\n").encode()
    response = _exchange(port, head)  # no body is sent: the answer must not wait for it
    assert _status(response) == 413
    _healthy(port)


def test_idle_and_slowloris_connections_are_dropped(server: tuple[KubeSession, int]) -> None:
    _, port = server
    idle = socket.create_connection(("127.0.0.1", port), timeout=10)
    slow = socket.create_connection(("127.0.0.1", port), timeout=10)
    started = time.monotonic()
    slow.sendall(b"GET /healthz HTTP/1.1\r\n")
    closed_slow = None
    for _ in range(40):  # one header byte every 0.1 s: each read is quick, the whole head is not
        try:
            slow.sendall(b"X")
        except OSError:
            closed_slow = time.monotonic() - started
            break
        time.sleep(0.1)
        slow.setblocking(False)
        try:
            if slow.recv(1) == b"":
                closed_slow = time.monotonic() - started
                break
        except BlockingIOError:
            pass
        finally:
            slow.setblocking(True)
    assert closed_slow is not None and closed_slow < 3.5, "the slowloris connection was kept"
    assert idle.recv(1) == b""  # closed by the server after IDLE_TIMEOUT
    assert time.monotonic() - started < 5
    idle.close()
    slow.close()
    _healthy(port)


def test_connections_beyond_the_limit_get_429_and_slots_come_back(server: tuple[KubeSession, int]) -> None:
    _, port = server
    held = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(8)]
    time.sleep(0.2)
    answer = _exchange(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _status(answer) == 429
    assert b"\r\nRetry-After: 1\r\n" in answer  # as kube-apiserver: client-go retries only when told when
    for sock in held:
        sock.close()
    time.sleep(0.3)
    _healthy(port)


def test_a_binding_naming_another_pod_is_refused_as_kube_apiserver_does(server: tuple[KubeSession, int]) -> None:
    _, port = server
    names: list[str] = []
    deadline = time.monotonic() + 10
    while len(names) < 2 and time.monotonic() < deadline:
        answer = _exchange(port, b"GET /api/v1/pods HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        names = [pod["metadata"]["name"] for pod in json.loads(answer.partition(b"\r\n\r\n")[2])["items"]]
        time.sleep(0.05)
    first, second = names[0], names[1]
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": second, "namespace": "default"},
               "target": {"apiVersion": "v1", "kind": "Node", "name": "node-0"}}
    response = _post(port, f"/api/v1/namespaces/default/pods/{first}/binding", json.dumps(binding).encode())
    assert _status(response) == 400 and b"name in URL does not match name in Binding object" in response
    binding["metadata"] = {"name": first, "namespace": "other"}
    response = _post(port, f"/api/v1/namespaces/default/pods/{first}/binding", json.dumps(binding).encode())
    assert _status(response) == 400 and b"namespace" in response
