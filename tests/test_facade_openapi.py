"""Property-based HTTP testing (schemathesis) of serve-k8s against its own OpenAPI description
(`clustersim.kubernetes.openapi`): generated requests for every documented operation, each answer checked for
no server error, a documented status code, and a body of the documented shape."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis", reason="schemathesis is in the [dev] extra")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from clustersim.kubernetes import KubeSession, PodWorkload, TimeControl, batkube_platform, batkube_pods  # noqa: E402
from clustersim.kubernetes.openapi import openapi  # noqa: E402
from clustersim.workload.stream import Workload  # noqa: E402

SCHEMA = schemathesis.openapi.from_dict(openapi())
OPERATIONS = [result.ok() for result in SCHEMA.get_all_operations()]
CHECKS = (not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pods = PodWorkload(Workload.from_jobs(batkube_pods("burst", count=3)))
    session = KubeSession(batkube_platform(nodes=2), pods, Path(tmp_path_factory.mktemp("openapi")),
                          TimeControl(deadlock_timeout=1e9), port=0)
    session.start()
    try:
        yield session.url
    finally:
        session.stop()


def test_the_description_covers_pods_bindings_and_status() -> None:
    paths = openapi()["paths"]
    for path in ("/api/v1/namespaces/{namespace}/pods/{name}/binding", "/api/v1/namespaces/{namespace}/bindings",
                 "/api/v1/namespaces/{namespace}/pods/{name}/status", "/api/v1/nodes/{name}", "/version"):
        assert path in paths


@pytest.mark.parametrize("operation", OPERATIONS, ids=[op.label for op in OPERATIONS])
def test_every_answer_conforms_to_the_description(server: str, operation: object) -> None:
    @given(case=operation.as_strategy())  # type: ignore[attr-defined]
    @settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)
    def check(case: object) -> None:
        case.call_and_validate(base_url=server, checks=CHECKS, timeout=10)  # type: ignore[attr-defined]

    check()
