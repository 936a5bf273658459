"""Server-side field validation (`?fieldValidation=Strict|Warn|Ignore`), as kube-apiserver does it for unknown fields.

kubectl 1.25+ validates what it creates or replaces by asking the server to (`fieldValidation=Strict`, its
default `--validate=strict`) once the server's OpenAPI v3 documents say it may (`openapi.served_group_version`);
the server then refuses an object with a field its kind does not have, naming it (`spec.containers[0].imagee`).

The field tree of every served kind is `fields.json`, generated from Kubernetes' own OpenAPI v3 documents (those
of the release the repository builds kube-scheduler from: `python -m clustersim.kubernetes.fields SPEC_DIR`,
SPEC_DIR being `api/openapi-spec/v3` of the k8s.io/kubernetes module). Per type, each field is "" (a scalar or a
free-form value: not looked into), a type name (an object), "[" + type (a list of them) or "{" + type (a map of
them).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from clustersim.kubernetes.resources import RESOURCES

FIELDS = Path(__file__).with_name("fields.json")
MODES = ("Strict", "Warn", "Ignore")


class StrictDecodingError(Exception):
    """Unknown fields in a request body under `fieldValidation=Strict`."""


@cache
def _tree() -> dict[str, Any]:
    tree: dict[str, Any] = json.loads(FIELDS.read_text(encoding="utf-8"))
    return tree


def unknown_fields(body: Mapping[str, object], group_version: str, kind: str) -> list[str]:
    """The paths of the fields in `body` that `kind` does not have, in document order (empty if it is unknown)."""
    tree = _tree()
    root = tree["kinds"].get(f"{group_version}/{kind}")
    return [] if root is None else list(_walk(body, root, "", tree["types"]))


def _walk(value: object, type_name: str, path: str, types: Mapping[str, Mapping[str, str]]) -> Iterator[str]:
    fields = types.get(type_name)
    if fields is None or not isinstance(value, Mapping):
        return
    for name, child in value.items():
        if str(name).startswith("$"):  # a strategic-merge-patch directive ($patch, $setElementOrder/...)
            continue
        where = f"{path}.{name}" if path else str(name)
        shape = fields.get(name)
        if shape is None:
            yield where
        elif shape.startswith("["):
            if isinstance(child, list):
                for i, item in enumerate(child):
                    yield from _walk(item, shape[1:], f"{where}[{i}]", types)
        elif shape.startswith("{"):
            if isinstance(child, Mapping):
                for key, item in child.items():
                    yield from _walk(item, shape[1:], f"{where}[{key}]", types)
        elif shape:
            yield from _walk(child, shape, where, types)


def check(body: Mapping[str, object], group_version: str, kind: str, mode: str) -> list[str]:
    """Apply one `fieldValidation` mode: raise under Strict, else the warnings to send (Warn) or none."""
    if mode not in MODES:
        raise ValueError(f'fieldValidation must be one of "Strict", "Warn", "Ignore", not "{mode}"')
    if mode == "Ignore":
        return []
    unknown = unknown_fields(body, group_version, kind)
    if unknown and mode == "Strict":
        detail = ", ".join(f'unknown field "{path}"' for path in unknown)
        raise StrictDecodingError(f'{kind} in version "{group_version.rsplit("/", 1)[-1]}" cannot be handled as a '
                                  f"{kind}: strict decoding error: {detail}")
    return [f'unknown field "{path}"' for path in unknown]


# -- generation, from Kubernetes' OpenAPI v3 documents ----------------------------------------------------


def _reference(schema: Mapping[str, Any]) -> str | None:
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    for part in schema.get("allOf", ()):
        if "$ref" in part:
            return str(part["$ref"]).rsplit("/", 1)[-1]
    return None


def _shape(schema: Mapping[str, Any]) -> str:
    reference = _reference(schema)
    if reference is not None:
        return reference
    if schema.get("type") == "array":
        item = _reference(schema.get("items", {}))
        return f"[{item}" if item else ""
    if schema.get("type") == "object" and isinstance(schema.get("additionalProperties"), Mapping):
        item = _reference(schema["additionalProperties"])
        return f"{{{item}" if item else ""
    return ""


def generate(spec_dir: Path) -> dict[str, Any]:
    """`fields.json`'s content: the field trees of the served kinds, from the OpenAPI v3 documents in `spec_dir`."""
    schemas: dict[str, Mapping[str, Any]] = {}
    kinds: dict[str, str] = {}
    for resource in RESOURCES:
        if resource.group:
            document = spec_dir / f"apis__{resource.group}__{resource.version}_openapi.json"
        else:
            document = spec_dir / f"api__{resource.version}_openapi.json"
        components = json.loads(document.read_text(encoding="utf-8"))["components"]["schemas"]
        schemas.update(components)
        for name, schema in components.items():
            for gvk in schema.get("x-kubernetes-group-version-kind", ()):
                if (gvk["group"], gvk["version"], gvk["kind"]) == (resource.group, resource.version, resource.kind):
                    kinds[f"{resource.group_version}/{resource.kind}"] = name
    types: dict[str, dict[str, str]] = {}
    todo = sorted(set(kinds.values()))
    while todo:
        name = todo.pop()
        if name in types:
            continue
        schema = schemas[name]
        if "properties" not in schema or schema.get("x-kubernetes-preserve-unknown-fields"):
            continue  # a scalar in JSON (Quantity, Time, IntOrString) or free-form: not looked into
        fields = {field: _shape(child) for field, child in sorted(schema["properties"].items())}
        types[name] = fields
        todo.extend(shape.lstrip("[{") for shape in fields.values() if shape)
    return {"kinds": dict(sorted(kinds.items())), "types": dict(sorted(types.items()))}


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m clustersim.kubernetes.fields SPEC_DIR  (k8s.io/kubernetes' "
                         "api/openapi-spec/v3)")
    FIELDS.write_text(json.dumps(generate(Path(args[0])), indent=0, separators=(",", ":")) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
