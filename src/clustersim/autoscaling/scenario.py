"""The autoscaling scenario file (YAML): deployment, traffic, metrics, HPA, cluster, run settings.

Every key is checked: a misspelt key fails naming the file, the field and the valid keys. See
docs/autoscaling.md for the format; `src/clustersim/examples/autoscale.yaml` is a complete example.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from clustersim._io.documents import load_document
from clustersim._io.fields import Checker, child, item
from clustersim._io.quantities import parse_bytes, parse_millicores
from clustersim.autoscaling.hpa import (
    DEFAULT_SCALE_DOWN,
    DEFAULT_SCALE_UP,
    HpaSpec,
    MetricKind,
    ScalingPolicy,
    ScalingRules,
    SelectPolicy,
)
from clustersim.autoscaling.manifest import deployment_defaults
from clustersim.autoscaling.metrics import MetricsConfig
from clustersim.autoscaling.replicas import Deployment
from clustersim.autoscaling.routers import ROUTERS
from clustersim.autoscaling.serving import DISTRIBUTIONS, Work
from clustersim.autoscaling.traffic import TRAFFIC, TrafficSource, read_replay, traffic_names
from clustersim.autoscaling.vpa import RESOURCES, ContainerPolicy, Mode, Resources, VpaSpec
from clustersim.errors import UnknownNameError
from clustersim.limits import MAX_JOBS, MAX_REQUESTS, MAX_SECONDS, MAX_STEPS
from clustersim.platform.cluster_file import parse_cluster, read_cluster_file
from clustersim.platform.model import Platform

TOP_KEYS = ("name", "duration", "seed", "mode", "fluid_step", "output_interval", "deployment", "traffic",
            "metrics", "hpa", "vpa", "cluster")
DEPLOYMENT_KEYS = ("manifest", "name", "replicas", "requests", "capacity", "startup_delay", "readiness_delay",
                   "termination_delay", "startup_cpu", "work", "work_distribution", "timeout", "router")
HPA_KEYS = ("min_replicas", "max_replicas", "metric", "target", "tolerance", "sync_period",
            "cpu_initialization_period", "initial_readiness_delay", "behavior")
RULES_KEYS = ("stabilization_window", "select_policy", "policies")
POLICY_KEYS = ("type", "value", "period")
CLUSTER_KEYS = ("file", "name", "unit", "nodes", "scheduler", "workload")
BACKGROUND_KEYS = ("count", "cpu", "memory", "start", "duration")
MODES = ("per-request", "aggregate")


@dataclass(frozen=True, slots=True)
class Background:
    """Other pods on the cluster: `count` pods of these requests from `start`, for `duration` seconds."""

    count: int
    cpu: int
    memory: int
    start: float
    duration: float


@dataclass
class Scenario:
    name: str
    duration: float
    seed: int
    mode: str
    fluid_step: float
    output_interval: float
    deployment: Deployment
    work: Work
    timeout: float
    router: str
    traffic: TrafficSource
    metrics: MetricsConfig
    hpa: HpaSpec | None
    platform: Platform
    scheduler: str
    background: list[Background] = field(default_factory=list)
    vpa: VpaSpec | None = None


def load_scenario(path: Path | str) -> Scenario:
    """Read a scenario file; relative paths in it (cluster file, replay trace) are relative to it."""
    source = str(path)
    return parse_scenario(load_document(path), source=source, base=Path(path).parent)


def parse_scenario(document: object, *, source: str = "<memory>", base: Path = Path(".")) -> Scenario:
    check = Checker(source)
    top = check.mapping(document, "")
    check.known_keys(top, "", TOP_KEYS)
    duration = check.number(check.required(top, "duration", ""), "duration", 0, above=True)
    mode = check.choice(top.get("mode", "per-request"), "mode", MODES)
    deployment_spec = check.mapping(check.required(top, "deployment", ""), "deployment")
    if "manifest" in deployment_spec:
        manifest = _path(deployment_spec["manifest"], "deployment.manifest", check, base)
        given = {key: value for key, value in deployment_spec.items() if key != "manifest"}
        deployment_spec = {**deployment_defaults(manifest), **given}
    deployment, work, timeout, router = _deployment(deployment_spec, check)
    hpa_value = top.get("hpa")
    scenario = Scenario(
        name=check.string(top.get("name", "autoscale"), "name"),
        duration=duration,
        seed=check.integer(top.get("seed", 0), "seed", 0),
        mode=mode,
        fluid_step=check.number(top.get("fluid_step", 1.0), "fluid_step", 0, above=True),
        output_interval=check.number(top.get("output_interval", 10.0), "output_interval", 0, above=True),
        deployment=deployment,
        work=work,
        timeout=timeout,
        router=router,
        traffic=_traffic(check.required(top, "traffic", ""), check, base),
        metrics=_metrics(top.get("metrics", {}), check),
        hpa=None if hpa_value is None else _hpa(check.mapping(hpa_value, "hpa"), check, deployment),
        platform=_platform(check.mapping(check.required(top, "cluster", ""), "cluster"), check, base),
        scheduler=str(check.mapping(top["cluster"], "cluster").get("scheduler", "auto")),
        background=_background(check.mapping(top["cluster"], "cluster").get("workload", []), check),
        vpa=None if top.get("vpa") is None else _vpa(check.mapping(top["vpa"], "vpa"), check),
    )
    _check_size(scenario, check)
    return scenario


def _path(value: object, field: str, check: Checker, base: Path) -> Path:
    """A file the scenario names, relative to the scenario's directory (a NUL character is no file name)."""
    name = check.string(value, field)
    if "\0" in name:
        check.expected(field, "a file path", value)
    return base / name


def _check_size(scenario: Scenario, check: Checker) -> None:
    """Refuse a scenario that would run for days with nothing to show: more steps than MAX_STEPS (its duration
    over its smallest step: output interval, metrics tick, fluid step), or more requests than MAX_REQUESTS."""
    steps = [scenario.output_interval, scenario.metrics.tick]
    if scenario.mode == "aggregate":
        steps.append(scenario.fluid_step)
    count = scenario.duration / min(steps)
    if scenario.duration > MAX_SECONDS or count > MAX_STEPS:
        check.fail("duration", f"{scenario.duration:g} s in steps of {min(steps):g} s is more than the limits of "
                   f"{MAX_SECONDS:g} s and {MAX_STEPS} steps (docs/limits.md)")
    peak = scenario.traffic.peak()
    if peak > MAX_REQUESTS:
        check.fail("traffic", f"a peak rate of {peak:g} requests/s is more than the limit of {MAX_REQUESTS} "
                   "(docs/limits.md)")
    if scenario.mode == "per-request" and peak * scenario.duration > MAX_REQUESTS:
        check.fail("traffic", f"{peak:g} requests/s for {scenario.duration:g} s is more than the {MAX_REQUESTS} "
                   "requests a per-request run simulates (docs/limits.md); the aggregate mode models such traffic")


VPA_KEYS = ("mode", "min_replicas", "eviction_tolerance", "recommender_interval", "updater_interval",
            "container_policy", "memory_usage")
VPA_POLICY_KEYS = ("mode", "min_allowed", "max_allowed", "controlled_resources")


def _vpa(spec: Mapping[str, object], check: Checker) -> VpaSpec:
    check.known_keys(spec, "vpa", VPA_KEYS)
    modes = {mode.value: mode for mode in Mode}
    mode_text = check.choice(spec.get("mode", "Auto"), "vpa.mode", modes)
    policy = check.mapping(spec.get("container_policy", {}), "vpa.container_policy")
    check.known_keys(policy, "vpa.container_policy", VPA_POLICY_KEYS)
    policy_mode = check.choice(policy.get("mode", "Auto"), "vpa.container_policy.mode", ("Auto", "Off"))
    controlled = tuple(str(r) for r in check.sequence(policy.get("controlled_resources", list(RESOURCES)),
                                                      "vpa.container_policy.controlled_resources"))
    for resource in controlled:
        if resource not in RESOURCES:
            check.expected("vpa.container_policy.controlled_resources", "cpu and/or memory", resource)
    usage = check.mapping(spec.get("memory_usage", {}), "vpa.memory_usage")
    check.known_keys(usage, "vpa.memory_usage", ("base", "per_request_per_s"))
    return VpaSpec(
        mode=modes[mode_text],
        policy=ContainerPolicy(
            mode=policy_mode,
            min_allowed=_resources(policy.get("min_allowed"), "vpa.container_policy.min_allowed", check),
            max_allowed=_resources(policy.get("max_allowed"), "vpa.container_policy.max_allowed", check),
            controlled=controlled,
        ),
        min_replicas=check.integer(spec.get("min_replicas", 2), "vpa.min_replicas", 1),
        eviction_tolerance=check.number(spec.get("eviction_tolerance", 0.5), "vpa.eviction_tolerance", 0),
        recommender_interval=check.number(spec.get("recommender_interval", 60.0), "vpa.recommender_interval", 0,
                                          above=True),
        updater_interval=check.number(spec.get("updater_interval", 60.0), "vpa.updater_interval", 0, above=True),
        memory_base=_bytes(usage.get("base", 0), "vpa.memory_usage.base", check),
        memory_per_rps=_bytes(usage.get("per_request_per_s", 0), "vpa.memory_usage.per_request_per_s", check),
    )


def _resources(value: object, field: str, check: Checker) -> Resources | None:
    """minAllowed / maxAllowed: cpu and memory quantities (a missing one is 0: no bound on it)."""
    if value is None:
        return None
    spec = check.mapping(value, field)
    check.known_keys(spec, field, RESOURCES)
    return Resources(_millicores(spec.get("cpu", 0), f"{field}.cpu", check),
                     _bytes(spec.get("memory", 0), f"{field}.memory", check))


def _millicores(value: object, field: str, check: Checker) -> int:
    return check.quantity(value, field, parse_millicores, "a cpu quantity such as 500m or 2")


def _bytes(value: object, field: str, check: Checker) -> int:
    return check.quantity(value, field, parse_bytes, "a memory quantity such as 256Mi")


def _deployment(spec: Mapping[str, object], check: Checker) -> tuple[Deployment, Work, float, str]:
    check.known_keys(spec, "deployment", DEPLOYMENT_KEYS)
    requests = check.mapping(spec.get("requests", {}), "deployment.requests")
    check.known_keys(requests, "deployment.requests", ("cpu", "memory"))
    cpu = _millicores(requests.get("cpu", "500m"), "deployment.requests.cpu", check)
    if cpu <= 0:
        check.expected("deployment.requests.cpu", "a cpu request > 0", requests.get("cpu"))
    capacity = _millicores(spec["capacity"], "deployment.capacity", check) if "capacity" in spec else cpu
    if capacity <= 0:
        check.expected("deployment.capacity", "a capacity > 0", spec.get("capacity"))

    def seconds(key: str, default: float) -> float:
        return check.number(spec.get(key, default), f"deployment.{key}", 0)

    deployment = Deployment(
        name=check.string(spec.get("name", "web"), "deployment.name"),
        replicas=check.integer(spec.get("replicas", 1), "deployment.replicas", 1, MAX_JOBS),
        cpu_request=cpu,
        memory_request=_bytes(requests.get("memory", 0), "deployment.requests.memory", check),
        capacity=capacity,
        startup_delay=seconds("startup_delay", 10.0),
        readiness_delay=seconds("readiness_delay", 5.0),
        termination_delay=seconds("termination_delay", 30.0),
        startup_cpu=_millicores(spec.get("startup_cpu", 0), "deployment.startup_cpu", check),
    )
    distribution = check.choice(spec.get("work_distribution", "exponential"), "deployment.work_distribution",
                                DISTRIBUTIONS)
    work = Work(check.number(spec.get("work", 0.05), "deployment.work", 0, above=True), distribution)
    timeout_value = spec.get("timeout")
    timeout = math.inf if timeout_value is None else check.number(timeout_value, "deployment.timeout", 0, True)
    router = check.choice(spec.get("router", "round-robin"), "deployment.router", ROUTERS)
    return deployment, work, timeout, router


def _traffic(value: object, check: Checker, base: Path) -> TrafficSource:
    spec = check.mapping(value, "traffic")
    pattern = check.string(check.required(spec, "pattern", "traffic"), "traffic.pattern")
    if pattern == "replay":
        check.known_keys(spec, "traffic", ("pattern", "file"))
        return read_replay(_path(check.required(spec, "file", "traffic"), "traffic.file", check, base), check.source)
    try:
        required, optional, factory = TRAFFIC.get(pattern)
    except UnknownNameError:
        check.expected("traffic.pattern", f"one of {', '.join(traffic_names())}", pattern)
    check.known_keys(spec, "traffic", ("pattern", *required, *optional))
    options = {key: check.number(check.required(spec, key, "traffic"), f"traffic.{key}", 0) for key in required}
    for key in optional:
        if key in spec:
            options[key] = check.number(spec[key], f"traffic.{key}")
    if pattern == "sinusoidal" and options["period"] <= 0:
        check.expected("traffic.period", "a period > 0", spec["period"])
    return factory(options)


def _metrics(value: object, check: Checker) -> MetricsConfig:
    spec = check.mapping(value, "metrics")
    check.known_keys(spec, "metrics", ("tick", "lag"))
    return MetricsConfig(
        tick=check.number(spec.get("tick", 10.0), "metrics.tick", 0, above=True),
        lag=check.number(spec.get("lag", 4.0), "metrics.lag", 0),
    )


def _rules(value: object, field: str, check: Checker, default: ScalingRules) -> ScalingRules:
    spec = check.mapping(value, field)
    check.known_keys(spec, field, RULES_KEYS)
    window = check.number(spec.get("stabilization_window", default.stabilization_window),
                          child(field, "stabilization_window"), 0)
    selects = {s.value: s for s in SelectPolicy}
    select_text = check.choice(spec.get("select_policy", default.select.value), child(field, "select_policy"), selects)
    policies = default.policies
    if "policies" in spec:
        entries = check.sequence(spec["policies"], child(field, "policies"))
        parsed = []
        for index, entry in enumerate(entries):
            where = item(child(field, "policies"), index)
            policy = check.mapping(entry, where)
            check.known_keys(policy, where, POLICY_KEYS)
            kind = check.choice(policy.get("type"), child(where, "type"), ("Pods", "Percent"))
            parsed.append(ScalingPolicy(
                kind, check.integer(check.required(policy, "value", where), child(where, "value"), 1),
                check.number(check.required(policy, "period", where), child(where, "period"), 0, above=True),
            ))
        policies = tuple(parsed)
    return ScalingRules(window, policies, selects[select_text])


def _hpa(spec: Mapping[str, object], check: Checker, deployment: Deployment) -> HpaSpec:
    check.known_keys(spec, "hpa", HPA_KEYS)
    kinds = {k.value: k for k in MetricKind}
    metric_text = check.choice(spec.get("metric", "cpu"), "hpa.metric", kinds)
    minimum = check.integer(spec.get("min_replicas", 1), "hpa.min_replicas", 1)
    maximum = check.integer(spec.get("max_replicas", 10), "hpa.max_replicas", minimum, MAX_JOBS)
    behavior = check.mapping(spec.get("behavior", {}), "hpa.behavior")
    check.known_keys(behavior, "hpa.behavior", ("scale_up", "scale_down"))
    return HpaSpec(
        min_replicas=minimum,
        max_replicas=maximum,
        metric=kinds[metric_text],
        target=check.number(spec.get("target", 80), "hpa.target", 0, above=True),
        tolerance=check.number(spec.get("tolerance", 0.1), "hpa.tolerance", 0),
        sync_period=check.number(spec.get("sync_period", 15.0), "hpa.sync_period", 0, above=True),
        cpu_initialization_period=check.number(spec.get("cpu_initialization_period", 300.0),
                                               "hpa.cpu_initialization_period", 0),
        initial_readiness_delay=check.number(spec.get("initial_readiness_delay", 30.0),
                                             "hpa.initial_readiness_delay", 0),
        scale_up=_rules(behavior.get("scale_up", {}), "hpa.behavior.scale_up", check, DEFAULT_SCALE_UP),
        scale_down=_rules(behavior.get("scale_down", {}), "hpa.behavior.scale_down", check, DEFAULT_SCALE_DOWN),
    )


def _platform(spec: Mapping[str, object], check: Checker, base: Path) -> Platform:
    check.known_keys(spec, "cluster", CLUSTER_KEYS)
    if "file" in spec:
        return read_cluster_file(_path(spec["file"], "cluster.file", check, base))
    inline = {k: v for k, v in spec.items() if k in ("name", "unit", "nodes")}
    if "nodes" not in inline:
        check.fail("cluster", "missing key 'nodes' (or 'file': a cluster description)")
    return parse_cluster(inline, source=f"{check.source} (cluster)")


def _background(value: object, check: Checker) -> list[Background]:
    groups = []
    for index, entry in enumerate(check.sequence(value, "cluster.workload")):
        where = item("cluster.workload", index)
        spec = check.mapping(entry, where)
        check.known_keys(spec, where, BACKGROUND_KEYS)
        groups.append(Background(
            count=check.integer(spec.get("count", 1), child(where, "count"), 1, MAX_JOBS),
            cpu=_millicores(check.required(spec, "cpu", where), child(where, "cpu"), check),
            memory=_bytes(spec.get("memory", 0), child(where, "memory"), check),
            start=check.number(spec.get("start", 0.0), child(where, "start"), 0),
            duration=check.number(check.required(spec, "duration", where), child(where, "duration"), 0, True),
        ))
    return groups
