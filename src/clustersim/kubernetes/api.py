"""The HTTP side of the facade: Kubernetes REST paths, routed by a table of (method, shape) to handlers.

Stdlib only (ThreadingHTTPServer, HTTP/1.1 keep-alive, TCP_NODELAY: without it every keep-alive request waits
~40 ms for delayed ACKs). Watches are chunked JSON-lines streams held open on their own thread.

Hostile clients are bounded by `clustersim.limits`: at most MAX_CONNECTIONS connections are served at once
(the next ones get 429), a request's line and headers must arrive within HEADER_TIMEOUT (slowloris) and fit
MAX_HEADER_BYTES, a connection idle for IDLE_TIMEOUT is closed, a body over MAX_BODY_BYTES is refused with 413
before it is read, and a body nested deeper than MAX_JSON_DEPTH with 400.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from clustersim.errors import InputError
from clustersim.kubernetes.events import core_event, in_simulated_time
from clustersim.kubernetes.facade import Action, ApiError, KubeFacade
from clustersim.kubernetes.feeds import Feed, Watcher, encode
from clustersim.kubernetes.fields import StrictDecodingError
from clustersim.kubernetes.fields import check as check_fields
from clustersim.kubernetes.manifests import DURATION_ANNOTATION, pod_template
from clustersim.kubernetes.objects import timestamp
from clustersim.kubernetes.openapi import served_group_version, served_root
from clustersim.kubernetes.pages import InvalidToken, ListPages
from clustersim.kubernetes.resources import (
    BY_PATH,
    IDLE_PATH,
    ResourceType,
    api_group,
    api_groups,
    api_versions,
    resource_list,
    version_info,
)
from clustersim.kubernetes.selectors import SelectorError, parse_field_selector, parse_label_selector
from clustersim.kubernetes.store import Obj, Store, metadata
from clustersim.kubernetes.tables import table
from clustersim.limits import (
    HEADER_TIMEOUT,
    IDLE_TIMEOUT,
    MAX_BODY_BYTES,
    MAX_CONNECTIONS,
    MAX_HEADER_BYTES,
    MAX_JSON_DEPTH,
)

_PATH = re.compile(
    r"^/(?:api/(?P<core>v1)|apis/(?P<group>[^/]+)/(?P<version>[^/]+))"
    r"(?:/namespaces/(?P<ns>[^/]+))?/(?P<plural>[^/]+)(?:/(?P<name>[^/]+))?(?:/(?P<sub>[^/]+))?$"
)
WATCH_TIMEOUT = 1800.0
BOOKMARK_EVERY = 5.0
LINGER_PER_WATCHER = 0.0005
"""A watcher that wrote recently waits this long per open watch of its view (its feed) for more events before it
writes again: the watchers of one busy view together then wake at most ~2,000 times a second, however fast
events come, and a lone watcher (a scheduler's pods informer) waits 0.5 ms at most. Counting the watches of
every resource instead made a scheduler's pods stream (one of its ~20 informers) wait ~10 ms after each write,
at every simulated instant."""


@dataclass
class Request:
    """A parsed REST request on a resource path."""

    method: str
    resource: ResourceType
    namespace: str
    name: str
    query: dict[str, str]
    body: Obj
    table: bool
    write: Callable[[bytes], None] = lambda data: None
    start: Callable[[], None] = lambda: None


class Response(Exception):
    """Raised by handlers to answer with a status and a JSON body."""

    def __init__(self, code: int, body: object):
        self.code = code
        self.body = body


def status(code: int, reason: str, message: str) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "code": code}


class Api:
    """The REST handlers over the store and the facade."""

    def __init__(self, store: Store, facade: KubeFacade):
        self.store = store
        self.facade = facade
        self.bookmark_every = BOOKMARK_EVERY
        """Seconds between BOOKMARKs on a watch that asked for them (tests shorten it)."""
        self._generated = 0
        self.pages = ListPages()
        generic: dict[tuple[str, str], Callable[[Request], tuple[int, object] | None]] = {
            ("GET", "collection"): self.list_or_watch,
            ("POST", "collection"): self.create,
            ("DELETE", "collection"): self.delete_collection,
            ("GET", "object"): self.get,
            ("PUT", "object"): self.update,
            ("PATCH", "object"): self.patch,
            ("DELETE", "object"): self.delete,
        }
        self.routes = generic
        self.overrides: dict[tuple[str, str, str], Callable[[Request], tuple[int, object] | None]] = {
            ("pods", "POST", "collection"): self.create_pod,
            ("pods", "DELETE", "object"): self.delete_pod,
            ("pods", "POST", "binding"): self.bind,
            ("bindings", "POST", "collection"): self.bind_legacy,
            ("pods", "PATCH", "status"): self.patch_pod_status,
            ("pods", "PUT", "status"): self.patch_pod_status,
            ("pods", "GET", "status"): self.get,
        }
        self.fixed: dict[str, Callable[[], object | None]] = {
            "/version": version_info,
            "/api": api_versions,
            "/apis": api_groups,
            "/healthz": lambda: "ok",
            "/livez": lambda: "ok",
            "/readyz": lambda: "ok",
            "/openapi/v3": served_root,
        }

    # -- plumbing ----------------------------------------------------------------------------------------

    def route(self, method: str, path: str, query: dict[str, str], body: Obj, accept: str,
              writer: Callable[[bytes], None], start_stream: Callable[[], None],
              warnings: list[str] | None = None) -> tuple[int, object] | None:
        """The answer to one request (None: a watch streamed it); `warnings` receives what goes into
        `Warning` headers (fieldValidation=Warn)."""
        if path == IDLE_PATH and method == "POST":
            return self.idle(body)
        if path == IDLE_PATH and method == "GET":
            version, now = self.facade.published()
            return 200, {"resourceVersion": str(version), "time": repr(now)}
        fixed = self.fixed.get(path.rstrip("/") or "/")
        if fixed is not None and method == "GET":
            return 200, fixed()
        if path.startswith("/openapi/v3/") and method == "GET":
            document = served_group_version(path.removeprefix("/openapi/v3/"))
            if document is not None:
                return 200, document
        discovery = self._discovery(path)
        if discovery is not None and method == "GET":
            return 200, discovery
        match = _PATH.match(path)
        if match is None:
            return 404, status(404, "NotFound", f"the server could not find the requested resource ({path})")
        group_version = match["core"] or f"{match['group']}/{match['version']}"
        plural = match["plural"]
        name = match["name"] or ""
        if plural == "bindings" and group_version == "v1":
            resource = BY_PATH[("v1", "pods")]
            key = "bindings"
        else:
            found = BY_PATH.get((group_version, plural))
            if found is None:
                return 404, status(404, "NotFound", f"the server could not find the requested resource ({path})")
            resource, key = found, plural
        shape = "collection" if not name else (match["sub"] or "object")
        handler = self.overrides.get((key, method, shape)) or (
            self.routes.get((method, shape)) if shape in ("collection", "object") else None)
        if handler is None:
            return 405, status(405, "MethodNotAllowed", f"{method} is not supported on {path}")
        json_patch = method == "PATCH" and isinstance(body.get("items"), list) and len(body) == 1
        if "fieldValidation" in query and method in ("POST", "PUT", "PATCH") and key != "bindings" \
                and shape != "binding" and not json_patch:
            try:
                unknown = check_fields(body, resource.group_version, resource.kind, query["fieldValidation"])
            except (ValueError, StrictDecodingError) as error:
                return 400, status(400, "BadRequest", str(error))
            if warnings is not None:
                warnings.extend(unknown)
        request = Request(method, resource, match["ns"] or "", name, query, body, "as=Table" in accept, writer,
                          start_stream)
        return handler(request)

    def _discovery(self, path: str) -> object | None:
        parts = path.strip("/").split("/")
        if parts[0] == "api" and len(parts) == 2:
            return resource_list(parts[1])
        if parts[0] == "apis" and len(parts) == 2:
            return api_group(parts[1])
        if parts[0] == "apis" and len(parts) == 3:
            return resource_list(f"{parts[1]}/{parts[2]}")
        return None

    def _selectors(self, request: Request) -> tuple[Callable[[Obj], bool], Callable[[Obj], bool]]:
        try:
            fields = parse_field_selector(request.query.get("fieldSelector", ""))
            labels = parse_label_selector(request.query.get("labelSelector", ""))
        except SelectorError as error:
            raise Response(400, status(400, "BadRequest", str(error))) from None
        return fields, labels

    # -- generic verbs -----------------------------------------------------------------------------------

    def list_or_watch(self, request: Request) -> tuple[int, object] | None:
        if request.query.get("watch") in ("true", "1"):
            self.watch(request)
            return None
        fields, labels = self._selectors(request)
        query = request.query
        limit_text = query.get("limit", "0")
        if not (limit_text.isascii() and limit_text.isdigit()):
            raise Response(400, status(400, "BadRequest", f"limit must be a non-negative integer, not '{limit_text}'"))
        limit = int(limit_text) or 1 << 62
        with self.store.cond:
            try:
                if query.get("continue"):
                    page = self.pages.next(query["continue"], limit)
                else:
                    items = [o for o in self.store.items(request.resource.key, request.namespace)
                             if fields(o) and labels(o)]
                    # A list at resourceVersion=0 is served whole from the watch cache, as by kube-apiserver v1.26.
                    page = self.pages.first(items, self.store.rv, len(items) if query.get("resourceVersion") == "0"
                                            else limit)
            except InvalidToken as error:
                code, reason = (410, "Expired") if error.expired else (400, "BadRequest")
                raise Response(code, status(code, reason, str(error))) from None
        meta: Obj = {"resourceVersion": str(page.rv)}
        if page.token:
            meta.update({"continue": page.token, "remainingItemCount": page.remaining})
        if request.table:
            return 200, {**table(request.resource.kind, page.items, page.rv, self.facade.now()), "metadata": meta}
        kind = request.resource
        return 200, {"kind": f"{kind.kind}List", "apiVersion": kind.group_version, "metadata": meta,
                     "items": page.items}

    def get(self, request: Request) -> tuple[int, object]:
        with self.store.cond:
            obj = self.store.get(request.resource.key, request.namespace, request.name)
            rv = self.store.rv
        if obj is None:
            return 404, status(404, "NotFound", f"{request.resource.plural} \"{request.name}\" not found")
        if request.table:
            return 200, table(request.resource.kind, [obj], rv, self.facade.now())
        return 200, obj

    def create(self, request: Request) -> tuple[int, object]:
        obj = dict(request.body)
        meta = dict(obj.get("metadata") or {})  # type: ignore[call-overload]
        if not meta.get("name"):
            if not meta.get("generateName"):
                return 422, status(422, "Invalid", "metadata.name: Required value")
            self._generated += 1
            meta["name"] = f"{meta['generateName']}{self._generated:05d}"
        if request.resource.namespaced:
            meta["namespace"] = request.namespace or meta.get("namespace") or "default"
        now = self.facade.now()
        if not meta.get("creationTimestamp"):  # a client's `null` too: the server sets it
            meta["creationTimestamp"] = timestamp(now)
        obj["metadata"] = meta
        obj.setdefault("kind", request.resource.kind)
        obj.setdefault("apiVersion", request.resource.group_version)
        resource = request.resource
        if resource.plural == "events":
            obj = in_simulated_time(obj, now)
        with self.store.cond:
            if self.store.get(resource.key, str(meta.get("namespace", "")), str(meta["name"])) is not None:
                return 409, status(409, "AlreadyExists", f"{resource.plural} \"{meta['name']}\" already exists")
            if resource.key == "events.events.k8s.io" and self.store.get("events", str(meta.get("namespace", "")),
                                                                          str(meta["name"])) is None:
                self.store.write("events", "ADDED", core_event(obj, now))
            return 201, self.store.write(resource.key, "ADDED", obj)

    def update(self, request: Request) -> tuple[int, object]:
        with self.store.cond:
            current = self.store.get(request.resource.key, request.namespace, request.name)
            if current is None:
                return 404, status(404, "NotFound", f"{request.resource.plural} \"{request.name}\" not found")
            meta = dict(request.body.get("metadata") or {})  # type: ignore[call-overload]
            wanted = meta.get("resourceVersion")
            if wanted and wanted != metadata(current).get("resourceVersion"):
                return 409, status(409, "Conflict", f"Operation cannot be fulfilled on {request.resource.plural} "
                                   f"\"{request.name}\": the object has been modified; please apply your changes "
                                   "to the latest version and try again")
            meta.update({k: metadata(current)[k] for k in ("uid", "creationTimestamp", "namespace")
                         if k in metadata(current)})
            written = self.store.write(request.resource.key, "MODIFIED", {**request.body, "metadata": meta})
        return self._node_changed(request, written)

    def patch(self, request: Request) -> tuple[int, object]:
        with self.store.cond:
            current = self.store.get(request.resource.key, request.namespace, request.name)
            if current is None:
                return 404, status(404, "NotFound", f"{request.resource.plural} \"{request.name}\" not found")
            written = self.store.write(request.resource.key, "MODIFIED", _merge(current, request.body))
        return self._node_changed(request, written)

    def _node_changed(self, request: Request, written: Obj) -> tuple[int, object]:
        """A Node changed through the API (cordon, labels, taints): the simulated cluster follows."""
        if request.resource.key != "nodes":
            return 200, written
        code, _ = self._run(self.facade.node_changed(written), 200)
        return code, written

    def delete(self, request: Request) -> tuple[int, object]:
        with self.store.cond:
            gone = self.store.remove(request.resource.key, request.namespace, request.name)
        if gone is None:
            return 404, status(404, "NotFound", f"{request.resource.plural} \"{request.name}\" not found")
        return 200, gone

    def delete_collection(self, request: Request) -> tuple[int, object]:
        with self.store.cond:
            for obj in self.store.items(request.resource.key, request.namespace):
                self.store.remove(request.resource.key, str(metadata(obj).get("namespace", "")),
                                  str(metadata(obj)["name"]))
        return 200, {"kind": "Status", "apiVersion": "v1", "status": "Success", "metadata": {}}

    # -- pods: through the simulation --------------------------------------------------------------------

    def _run(self, action: Action, code: int) -> tuple[int, object]:
        try:
            return code, self.facade.submit(action)
        except ApiError as error:
            return error.code, status(error.code, error.reason, error.message)

    def create_pod(self, request: Request) -> tuple[int, object]:
        body = request.body
        meta = dict(body.get("metadata") or {})  # type: ignore[call-overload]
        meta["namespace"] = request.namespace or meta.get("namespace") or "default"
        if not meta.get("name") and meta.get("generateName"):
            self._generated += 1
            meta["name"] = f"{meta['generateName']}{self._generated:05d}"
        try:
            template = pod_template(meta, dict(body.get("spec") or {}), "request body", "pod")  # type: ignore[call-overload]
        except InputError as error:
            return 422, status(422, "Invalid", str(error))
        if not template.spec.name:
            return 422, status(422, "Invalid", "metadata.name: Required value")
        if template.duration <= 0:  # a simulated pod must say how long it runs: it would end as it starts
            return 422, status(422, "Invalid", f"metadata.annotations[{DURATION_ANNOTATION}]: Required value: "
                               "the pod's simulated run time (e.g. 170s, 2m30s), greater than 0")
        action = self.facade.create_pod(template.spec.namespace, template.spec, template.request, template.duration)
        return self._run(action, 201)

    def delete_pod(self, request: Request) -> tuple[int, object]:
        return self._run(self.facade.delete_pod(request.namespace, request.name), 200)

    def bind(self, request: Request) -> tuple[int, object]:
        meta = request.body.get("metadata")
        if isinstance(meta, Mapping):  # as kube-apiserver's BindingREST.Create and rest.BeforeCreate refuse them
            if meta.get("name", request.name) != request.name:
                return 400, status(400, "BadRequest", "name in URL does not match name in Binding object")
            if meta.get("namespace", request.namespace) not in ("", request.namespace):
                return 400, status(400, "BadRequest", "the namespace of the provided object does not match the "
                                   "namespace sent on the request")
        target = request.body.get("target")
        if not isinstance(target, Mapping) or not target.get("name"):
            return 422, status(422, "Invalid", "target.name: Required value")
        return self._bound(self._run(self.facade.bind(request.namespace, request.name, str(target["name"])), 201))

    def bind_legacy(self, request: Request) -> tuple[int, object]:
        meta = request.body.get("metadata")
        name = str(meta.get("name", "")) if isinstance(meta, Mapping) else ""
        return self.bind(Request(request.method, request.resource, request.namespace, name, request.query,
                                 request.body, False, request.write, request.start))

    def _bound(self, answer: tuple[int, object]) -> tuple[int, object]:
        code, _ = answer
        if code != 201:
            return answer
        return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}

    def idle(self, body: Obj) -> tuple[int, object]:
        """POST /clustersim/v1/idle {"resourceVersion": "N"}: a simulation-build scheduler is idle (facade.py)."""
        version = str(body.get("resourceVersion", ""))
        if not version.isdigit():
            return 400, status(400, "BadRequest", f"{IDLE_PATH}: resourceVersion must be a number, got {version!r}")
        self.facade.scheduler_idle(int(version))
        return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 200}

    def patch_pod_status(self, request: Request) -> tuple[int, object]:
        return self._run(self.facade.patch_status(request.namespace, request.name, request.body), 200)

    # -- watch -------------------------------------------------------------------------------------------

    def watch(self, request: Request) -> None:
        """Catch up from the log (or the current objects), then follow the view's shared feed."""
        fields, labels = self._selectors(request)
        rv_text = request.query.get("resourceVersion", "")
        store, resource = self.store, request.resource
        selectors = (request.query.get("fieldSelector", ""), request.query.get("labelSelector", ""))
        rv = 0
        if rv_text not in ("", "0"):
            try:
                rv = int(rv_text)
            except ValueError:
                raise Response(400, status(400, "BadRequest", f"invalid resourceVersion '{rv_text}'")) from None
        with store.cond:
            if rv and rv < store.oldest():
                raise Response(410, status(410, "Expired", f"too old resource version: {rv} ({store.oldest()})"))
            feed = store.feed(resource.key, request.namespace, selectors, fields, labels)
            if rv:
                lines = [line for e in store.events_after(rv, resource.key) if (line := feed.view(e))]
            else:
                lines = store.added_lines(resource.key, request.namespace, lambda o: fields(o) and labels(o))
            watcher = Watcher(feed.end)
        timeout = min(float(request.query.get("timeoutSeconds", WATCH_TIMEOUT)), WATCH_TIMEOUT)
        bookmarks = request.query.get("allowWatchBookmarks") == "true"
        if request.table:  # `kubectl get -w`: each object as a one-row Table, its age in simulated time
            request = dataclasses.replace(request, write=self._tables(request))
        try:
            request.start()
            if lines:
                request.write(b"".join(lines))
            self._stream(request, feed, watcher, time.monotonic() + timeout, bookmarks)
        finally:
            with store.cond:
                store.unfeed(resource.key, feed, watcher)

    def _tables(self, request: Request) -> Callable[[bytes], None]:
        """A writer turning watch lines into lines whose object is a Table (as kube-apiserver serves as=Table)."""
        kind, write = request.resource.kind, request.write

        def tables(data: bytes) -> None:
            lines = []
            for line in data.splitlines():
                event = json.loads(line)
                obj = event.get("object")
                if event.get("type") in ("ADDED", "MODIFIED", "DELETED") and isinstance(obj, dict):
                    rv = int(metadata(obj).get("resourceVersion") or 0)  # type: ignore[call-overload]
                    event["object"] = table(kind, [obj], rv, self.facade.now())
                lines.append(encode(str(event.get("type")), event.get("object")))
            write(b"".join(lines))

        return tables

    def _stream(self, request: Request, feed: Feed, watcher: Watcher, deadline: float, bookmarks: bool) -> None:
        """Write what the feed gained since the last write, in one chunk; sleep on the watcher's own event."""
        store, resource, write = self.store, request.resource, request.write
        next_bookmark = time.monotonic() + self.bookmark_every
        last_write = 0.0
        while True:
            pause = last_write + LINGER_PER_WATCHER * feed.watchers - time.monotonic()
            if pause > 0:
                time.sleep(pause)  # under load: let events gather (outside the lock), one write carries them all
            with store.cond:
                if store.closed:
                    return
                lines = feed.take(watcher)
                rv = store.rv
            if lines is None:
                write(encode("ERROR", status(410, "Expired", "too old resource version: the watch fell behind")))
                return
            now = time.monotonic()
            bookmark = bookmarks and now >= next_bookmark
            if not lines and not bookmark:
                if now >= deadline:
                    return
                wait = deadline - now
                if bookmarks:
                    wait = min(wait, next_bookmark - now)
                watcher.wake.wait(wait)
                continue
            if bookmark:
                lines.append(encode("BOOKMARK", {"kind": resource.kind, "apiVersion": resource.group_version,
                                                 "metadata": {"resourceVersion": str(rv)}}))
                next_bookmark = now + self.bookmark_every
            write(b"".join(lines))
            last_write = time.monotonic()
            if last_write >= deadline:
                return


def _merge(current: Mapping[str, object], patch: Mapping[str, object]) -> Obj:
    """JSON merge patch (strategic merge without list keys): mappings merge, None deletes, the rest replaces."""
    merged = dict(current)
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _merge(merged[key], value)  # type: ignore[arg-type]
        else:
            merged[key] = value
    return merged


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    fields: dict[str, str]
    raw_requestline: bytes

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.command = ""  # send_error reads it, and a refused request line never sets it
        self.request_version = "HTTP/1.1"

    def handle_one_request(self) -> None:
        """One request, its line and headers (and body) under the reaper's deadlines: idle, then header."""
        reaper = self.server.reaper
        reaper.watch(self.connection, IDLE_TIMEOUT)
        try:
            if self.rfile.peek(1):  # type: ignore[attr-defined]  # the request's first byte: from now on its head must come quickly
                reaper.watch(self.connection, HEADER_TIMEOUT)
            super().handle_one_request()
        except OSError:  # the reaper shut the connection, or the client vanished
            self.close_connection = True
        finally:
            reaper.forget(self.connection)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet: a scheduler makes thousands of requests."""

    def parse_request(self) -> bool:
        """The request line and headers, read plainly: the stdlib's email-based header parser costs more than
        the rest of a binding's handling. Headers land in `fields` (lower-case names)."""
        line = str(self.raw_requestline, "iso-8859-1").rstrip("\r\n")
        self.requestline = line
        parts = line.split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self.request_version = "HTTP/1.1"
            self.send_error(400, f"bad request line {line!r}")
            return False
        self.command, self.path, self.request_version = parts
        fields: dict[str, str] = {}
        size = len(self.raw_requestline)
        for _ in range(100):
            raw = self.rfile.readline(MAX_HEADER_BYTES + 1)
            size += len(raw)
            if size > MAX_HEADER_BYTES:
                break
            if raw in (b"\r\n", b"\n", b""):
                self.fields = fields
                break
            name, _, value = str(raw, "iso-8859-1").partition(":")
            fields[name.strip().lower()] = value.strip()
        if getattr(self, "fields", None) is not fields:
            self.close_connection = True
            self.send_error(431, f"request header fields larger than {MAX_HEADER_BYTES} bytes or over 100 fields")
            return False
        connection = fields.get("connection", "").lower()
        self.close_connection = connection == "close" or (self.request_version == "HTTP/1.0"
                                                          and connection != "keep-alive")
        return True

    def _handle(self) -> None:
        try:
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
        except ValueError as error:  # `//[::1` and the like (found by fuzzing)
            self.close_connection = True
            self._send(400, status(400, "BadRequest", f"bad request path {self.path[:200]!r}: {error}"))
            return
        length_text = self.fields.get("content-length") or "0"
        if not (length_text.isascii() and length_text.isdigit()):  # isdigit alone accepts "²", which int refuses
            self._send(400, status(400, "BadRequest", f"bad Content-Length {length_text!r}"))
            self.close_connection = True
            return
        length = int(length_text)
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # its body is never read
            self._send(413, status(413, "RequestEntityTooLarge", f"the request body is larger than {MAX_BODY_BYTES} "
                                   "bytes"))
            return
        body: Obj = {}
        if length:
            data = self.rfile.read(length)
            try:
                decoded = json.loads(data)
            except RecursionError:
                decoded = _TOO_DEEP
            except ValueError:
                message = ("the body must be JSON (run kube-scheduler with --kube-api-content-type=application/json"
                           " or clientConnection.contentType: application/json)")
                if not self.server.warned_media:  # said once: a scheduler on protobuf fails every binding
                    self.server.warned_media = True
                    print(f"clustersim: error: {self.command} {url.path}: Content-Type "
                          f"{self.fields.get('content-type', '?')}: {message}", file=sys.stderr, flush=True)
                self.server.api.facade.refused(unreadable=True)
                self._send(415, status(415, "UnsupportedMediaType", message))
                return
            if decoded is _TOO_DEEP or _too_deep(decoded):
                self._send(400, status(400, "BadRequest", f"the JSON body is nested deeper than {MAX_JSON_DEPTH}"))
                return
            body = decoded if isinstance(decoded, dict) else {"items": decoded}
        self.server.reaper.forget(self.connection)  # the request is in: a watch may now last long
        streaming = [False]

        def start() -> None:
            streaming[0] = True
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

        def write(data: bytes) -> None:
            if data:  # an empty chunk would end the stream
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

        try:
            self._answer(url.path, query, body, write, start, streaming)
        finally:
            self.server.api.facade.answered()

    def _answer(self, path: str, query: dict[str, str], body: Obj, write: Callable[[bytes], None],
                start: Callable[[], None], streaming: list[bool]) -> None:
        warnings: list[str] = []
        try:
            answer = self.server.api.route(self.command, path, query, body, self.fields.get("accept", ""),
                                           write, start, warnings)
        except Response as response:
            if streaming[0]:
                self.close_connection = True  # a stream cut short: the client must not reuse the connection
                return
            answer = (response.code, response.body)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
            return
        if answer is None:  # a watch that ended: its last chunk ends the response, the connection stays usable
            with contextlib.suppress(OSError):
                self.wfile.write(b"0\r\n\r\n")
            return
        self._send(*answer, warnings)

    def _send(self, code: int, body: object, warnings: Sequence[str] = ()) -> None:
        data = body.encode() if isinstance(body, str) else json.dumps(body, separators=(",", ":")).encode()
        warned = "".join(f"Warning: 299 - {json.dumps(text)}\r\n" for text in warnings)
        head = (f"HTTP/1.1 {code} {self.responses.get(code, ('',))[0]}\r\nContent-Type: "
                f"{'text/plain' if isinstance(body, str) else 'application/json'}\r\n{warned}"
                f"Content-Length: {len(data)}\r\n\r\n").encode()
        self.wfile.write(head + data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle


_TOO_DEEP = object()


def _too_deep(value: object) -> bool:
    """Whether a decoded JSON value nests deeper than MAX_JSON_DEPTH (checked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > MAX_JSON_DEPTH:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class _Reaper:
    """Closes connections past their deadline: idle ones, and those whose request head arrives too slowly."""

    def __init__(self) -> None:
        self._deadlines: dict[socket.socket, float] = {}
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="k8s-api-reaper", daemon=True)
        self._thread.start()

    def watch(self, connection: socket.socket, seconds: float) -> None:
        with self._lock:
            self._deadlines[connection] = time.monotonic() + seconds

    def forget(self, connection: socket.socket) -> None:
        with self._lock:
            self._deadlines.pop(connection, None)

    def stop(self) -> None:
        self._stopped.set()

    def _run(self) -> None:
        while not self._stopped.wait(min(1.0, HEADER_TIMEOUT / 4)):
            now = time.monotonic()
            with self._lock:
                late = [c for c, deadline in self._deadlines.items() if deadline < now]
                for connection in late:
                    del self._deadlines[connection]
            for connection in late:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 256

    def __init__(self, address: tuple[str, int], api: Api):
        self.api = api
        self.warned_media = False
        self.reaper = _Reaper()  # before binding: a failed bind calls server_close, which stops it
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        self._open: set[socket.socket] = set()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def process_request(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        """Serve the connection on a thread of its own, or answer 429 when MAX_CONNECTIONS are being served, with
        kube-apiserver's `Retry-After: 1` (client-go retries only a 429 that says when: without it a binding or a
        status patch would be lost)."""
        if not self._slots.acquire(blocking=False):
            with contextlib.suppress(OSError):
                body = json.dumps(status(429, "TooManyRequests", f"more than {MAX_CONNECTIONS} connections"))
                request.sendall(f"HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\n"
                                f"Retry-After: 1\r\nConnection: close\r\nContent-Length: {len(body)}\r\n\r\n"
                                f"{body}".encode())
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: socket.socket, client_address: object) -> None:  # type: ignore[override]
        with self._open_lock:
            self._open.add(request)
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._open_lock:
                self._open.discard(request)
            self._slots.release()

    def server_close(self) -> None:
        """Stop listening and close every open connection, so clients see the end (not a silent server)."""
        self.reaper.stop()
        super().server_close()
        with self._open_lock:
            for connection in self._open:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class ApiServer:
    """The facade's HTTP server on its own thread; `port` is the bound port (0 asks the OS for one)."""

    def __init__(self, store: Store, facade: KubeFacade, host: str = "127.0.0.1", port: int = 8001):
        self.api = Api(store, facade)
        try:
            self._server = _Server((host, port), self.api)
        except OSError as error:  # "[Errno 98] Address already in use" would not say which address
            raise InputError("--host/--port", f"cannot listen on {host}:{port}: {error.strerror or error}") from None
        self.host = host
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="k8s-api", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> ApiServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.api.store.close()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
