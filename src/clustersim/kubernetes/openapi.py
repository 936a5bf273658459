"""OpenAPI 3 documents of the facade: the one it serves to clients (`/openapi/v3`), and a description of its REST
endpoints that a property-based HTTP tester (schemathesis, in tests/test_facade_openapi.py) checks it against.

**Served** (`served_root`, `served_group_version`): kube-apiserver's discovery of OpenAPI v3, one document per
group version, each with a path per resource whose PATCH operation names its kind
(`x-kubernetes-group-version-kind`) and the `fieldValidation` parameter. That is what kubectl 1.25+ looks for
before it validates an object by asking the server to (`fieldValidation=Strict`, see `fields.py`) instead of
downloading every schema to validate on its side; `kubectl create -f` then works without `--validate=false`.
The documents carry no schemas (`kubectl explain` has nothing to show).

**Described** (`openapi`):
It is built from the facade's resource table (`resources.RESOURCES`), so a served resource cannot be missing:
per resource, list and create on the collection (namespaced and cluster-wide), get, replace, patch and delete
on an object; for pods also `binding` and `status`, and the legacy `bindings` collection; and the simulation
build's idle report (`/clustersim/v1/idle`). Bodies and answers
are Kubernetes objects, lists and `Status` objects, described loosely (`kind`, `apiVersion`, `metadata`, open
otherwise), since the facade is checked against the real clients elsewhere; what this description pins down is
that every answer is one of the documented codes with a JSON body of the documented shape, never a 5xx.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from clustersim.kubernetes.resources import IDLE_PATH, RESOURCES, ResourceType

Schema = dict[str, Any]

_OBJECT: Schema = {"$ref": "#/components/schemas/Object"}
_LIST: Schema = {"$ref": "#/components/schemas/List"}
_STATUS: Schema = {"$ref": "#/components/schemas/Status"}
_ERRORS = ("400", "404", "405", "409", "413", "415", "422", "429")
"""Codes every endpoint may answer with a Status body (bad input, missing object, conflict, limits)."""

_NAME: Schema = {"type": "string", "pattern": "^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$"}


def _json(schema: Schema) -> Schema:
    return {"content": {"application/json": {"schema": schema}}}


def _responses(ok: str, schema: Schema) -> Schema:
    answers: Schema = {ok: {"description": "the object or list", **_json(schema)}}
    for code in _ERRORS:
        answers[code] = {"description": "a Kubernetes Status explaining the refusal", **_json(_STATUS)}
    return answers


def _parameter(name: str, where: str = "path", schema: Schema | None = None) -> Schema:
    return {"name": name, "in": where, "required": where == "path", "schema": schema or _NAME}


_LIST_QUERY = [
    _parameter("labelSelector", "query", {"type": "string"}),
    _parameter("fieldSelector", "query", {"type": "string"}),
    _parameter("limit", "query", {"type": "integer", "minimum": 0}),
]


def _prefix(resource: ResourceType) -> str:
    return f"/api/{resource.version}" if not resource.group else f"/apis/{resource.group}/{resource.version}"


def _resource_paths(resource: ResourceType) -> dict[str, Schema]:
    base = _prefix(resource)
    namespace = [_parameter("namespace")] if resource.namespaced else []
    scoped = f"{base}/namespaces/{{namespace}}/{resource.plural}" if resource.namespaced else \
        f"{base}/{resource.plural}"
    body = {"required": True, **_json(_OBJECT)}
    label = f"{resource.group or 'core'}.{resource.kind}"
    paths: dict[str, Schema] = {
        scoped: {
            "get": {"operationId": f"list {label}", "parameters": [*namespace, *_LIST_QUERY],
                    "responses": _responses("200", _LIST)},
            "post": {"operationId": f"create {label}", "parameters": namespace, "requestBody": body,
                     "responses": {**_responses("201", _OBJECT), "200": {"description": "created", **_json(_OBJECT)}}},
        },
        f"{scoped}/{{name}}": {
            "get": {"operationId": f"read {label}", "parameters": [*namespace, _parameter("name")],
                    "responses": _responses("200", _OBJECT)},
            "delete": {"operationId": f"delete {label}", "parameters": [*namespace, _parameter("name")],
                       "responses": _responses("200", _OBJECT)},
        },
    }
    if resource.namespaced:
        paths[f"{base}/{resource.plural}"] = {
            "get": {"operationId": f"list {label} in all namespaces", "parameters": _LIST_QUERY,
                    "responses": _responses("200", _LIST)}
        }
    if resource.plural == "pods" and not resource.group:
        binding = {"required": True, **_json({"$ref": "#/components/schemas/Binding"})}
        paths[f"{scoped}/{{name}}/binding"] = {
            "post": {"operationId": "bind a pod", "parameters": [*namespace, _parameter("name")],
                     "requestBody": binding, "responses": _responses("201", _STATUS)}}
        paths[f"{base}/namespaces/{{namespace}}/bindings"] = {
            "post": {"operationId": "bind a pod (legacy)", "parameters": namespace, "requestBody": binding,
                     "responses": _responses("201", _STATUS)}}
        paths[f"{scoped}/{{name}}/status"] = {
            "get": {"operationId": "read a pod's status", "parameters": [*namespace, _parameter("name")],
                    "responses": _responses("200", _OBJECT)},
            "patch": {"operationId": "patch a pod's status", "parameters": [*namespace, _parameter("name")],
                      "requestBody": {"required": True, "content": {
                          "application/merge-patch+json": {"schema": _OBJECT},
                          "application/strategic-merge-patch+json": {"schema": _OBJECT}}},
                      "responses": _responses("200", _OBJECT)}}
    return paths


def openapi() -> Schema:
    """The OpenAPI 3.0 document of the facade's endpoints."""
    paths: Schema = {
        path: {"get": {"operationId": f"GET {path}", "responses": {"200": {"description": "ok"}}}}
        for path in ("/version", "/api", "/apis", "/healthz", "/livez", "/readyz")
    }
    for resource in RESOURCES:
        paths.update(_resource_paths(resource))
    version: Schema = {"type": "object", "required": ["resourceVersion"],
                       "properties": {"resourceVersion": {"type": "string", "pattern": "^[0-9]+$"}}}
    paths[IDLE_PATH] = {  # the simulation build's idle reports (facade.py)
        "get": {"operationId": f"GET {IDLE_PATH}", "responses": _responses("200", version)},
        "post": {"operationId": f"POST {IDLE_PATH}", "requestBody": {"required": True, **_json(version)},
                 "responses": _responses("200", _STATUS)},
    }
    meta = {"type": "object", "properties": {"name": {"type": "string"}, "namespace": {"type": "string"},
                                             "resourceVersion": {"type": "string"}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "clustersim Kubernetes facade", "version": "v1"},
        "paths": paths,
        "components": {"schemas": {
            "Object": {"type": "object", "properties": {"kind": {"type": "string"}, "apiVersion": {"type": "string"},
                                                         "metadata": meta}},
            "List": {"type": "object", "required": ["items"], "properties": {
                "kind": {"type": "string"}, "apiVersion": {"type": "string"}, "metadata": {"type": "object"},
                "items": {"type": "array", "items": _OBJECT}}},
            "Status": {"type": "object", "required": ["kind", "code"], "properties": {
                "kind": {"type": "string", "enum": ["Status"]}, "code": {"type": "integer"},
                "status": {"type": "string"}, "message": {"type": "string"}, "reason": {"type": "string"}}},
            "Binding": {"type": "object", "properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": meta,
                "target": {"type": "object", "properties": {"kind": {"type": "string"}, "name": _NAME}}}},
        }},
    }


_FIELD_VALIDATION: Schema = {
    "name": "fieldValidation", "in": "query", "uniqueItems": True, "schema": {"type": "string"},
    "description": "how the server handles unknown fields in the body: Ignore, Warn or Strict (refused)",
}


def _group_version_path(group_version: str) -> str:
    return f"api/{group_version}" if "/" not in group_version else f"apis/{group_version}"


@cache
def _served() -> dict[str, Schema]:
    documents: dict[str, Schema] = {}
    for resource in RESOURCES:
        document = documents.setdefault(_group_version_path(resource.group_version), {
            "openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.34.4-clustersim"}, "paths": {},
            "components": {"schemas": {}}})
        gvk = {"group": resource.group, "version": resource.version, "kind": resource.kind}
        base = _prefix(resource)
        scoped = f"{base}/namespaces/{{namespace}}/{resource.plural}" if resource.namespaced else \
            f"{base}/{resource.plural}"
        operation = {"operationId": f"patch{resource.kind}", "x-kubernetes-action": "patch",
                     "x-kubernetes-group-version-kind": gvk, "parameters": [_FIELD_VALIDATION],
                     "responses": {"200": {"description": "OK"}}}
        document["paths"][f"{scoped}/{{name}}"] = {"parameters": [_FIELD_VALIDATION], "patch": operation}
        document["paths"][scoped] = {"parameters": [_FIELD_VALIDATION], "post": {
            **operation, "operationId": f"create{resource.kind}", "x-kubernetes-action": "post"}}
    return documents


def served_group_version(path: str) -> Schema | None:
    """The OpenAPI v3 document of one group version (`api/v1`, `apis/apps/v1`), or None."""
    return _served().get(path.strip("/"))


@cache
def served_root() -> Schema:
    """`/openapi/v3`: where each group version's document is (its URL carries a hash of it, as kube-apiserver's)."""
    paths: Schema = {}
    for path, document in sorted(_served().items()):
        digest = hashlib.sha512(json.dumps(document, sort_keys=True).encode()).hexdigest().upper()
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest[:128]}"}
    return {"paths": paths}
