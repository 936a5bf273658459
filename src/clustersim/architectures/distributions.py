"""Distributions that job parameters are sampled from, always with a generator passed in by the caller.

The seed's simulator generated workloads from empirical distributions built from small trace files (so a few
measurements give endless distinct workloads), or from exponential ones. Here every distribution is a small
named class; configurations name it (`distribution: weibull`) and give its parameters, or give a file of
samples. Sampling takes the `random.Random` of the stream it belongs to, so each workload draws from its own
seeded stream and changing one scheduler's settings never changes the jobs another receives.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from clustersim._io.fields import Checker, child
from clustersim.architectures.tracefiles import read_samples
from clustersim.plugins import Registry


class Distribution(Protocol):
    """Something to sample non-negative values from."""

    def sample(self, rng: random.Random) -> float: ...

    def maximum(self) -> float:
        """The largest value it can give (inf when unbounded); a zero maximum means it only gives zeros."""
        ...


@dataclass(frozen=True, slots=True)
class Constant:
    """Always the same value: for hand-checkable configurations."""

    value: float

    def sample(self, rng: random.Random) -> float:
        return self.value

    def maximum(self) -> float:
        return self.value


@dataclass(frozen=True, slots=True)
class Exponential:
    """Memoryless, given by its mean: the seed's synthetic workloads used it for everything."""

    mean: float

    def sample(self, rng: random.Random) -> float:
        return rng.expovariate(1.0 / self.mean)

    def maximum(self) -> float:
        return math.inf


@dataclass(frozen=True, slots=True)
class Weibull:
    """Heavy or light tails by `shape` (1 is exponential); job run times and sizes are often fitted by it."""

    shape: float
    scale: float

    def sample(self, rng: random.Random) -> float:
        return rng.weibullvariate(self.scale, self.shape)

    def maximum(self) -> float:
        return math.inf


@dataclass(frozen=True, slots=True)
class Lognormal:
    """exp(N(mu, sigma)): the usual fit for run times spanning orders of magnitude."""

    mu: float
    sigma: float

    def sample(self, rng: random.Random) -> float:
        return rng.lognormvariate(self.mu, self.sigma)

    def maximum(self) -> float:
        return math.inf


class Empirical:
    """The inverse of the samples' empirical CDF, interpolated linearly between sorted samples.

    This is what the seed meant to do with its 1,001 quantiles (its interpolation added `below + above`); with
    the samples themselves instead of quantiles, nothing is lost for small files.
    """

    __slots__ = ("_values",)

    def __init__(self, values: Sequence[float]):
        if not values:
            raise ValueError("an empirical distribution needs at least one value")
        self._values = tuple(sorted(values))

    def sample(self, rng: random.Random) -> float:
        values = self._values
        position = rng.random() * (len(values) - 1)
        low = int(position)
        if low + 1 >= len(values):
            return values[low]
        fraction = position - low
        return values[low] + fraction * (values[low + 1] - values[low])

    def maximum(self) -> float:
        return self._values[-1]

    def __repr__(self) -> str:
        return f"Empirical({len(self._values)} values)"


@dataclass(frozen=True, slots=True)
class Clipped:
    """Another distribution's values limited to [low, high], e.g. task sizes that must fit a machine."""

    inner: Distribution
    low: float
    high: float

    def sample(self, rng: random.Random) -> float:
        return min(self.high, max(self.low, self.inner.sample(rng)))

    def maximum(self) -> float:
        return min(self.high, self.inner.maximum())


@dataclass(frozen=True)
class SpecContext:
    """What parsing a distribution needs besides its mapping: where relative files are, which trace rows."""

    check: Checker
    base_dir: Path
    trace_id: int | None


Parser = Callable[[Mapping[str, object], str, SpecContext], Distribution]
DISTRIBUTIONS: Registry[Parser] = Registry("distribution")
"""Parsers of a distribution's parameters, by distribution name."""

COMMON_KEYS = ("distribution", "min", "max")


def _params(spec: Mapping[str, object], field: str, ctx: SpecContext, keys: tuple[str, ...]) -> dict[str, float]:
    ctx.check.known_keys(spec, field, (*COMMON_KEYS, *keys))
    return {key: ctx.check.number(ctx.check.required(spec, key, field), child(field, key)) for key in keys}


@DISTRIBUTIONS.register("constant")
def _constant(spec: Mapping[str, object], field: str, ctx: SpecContext) -> Distribution:
    value = _params(spec, field, ctx, ("value",))["value"]
    if value < 0:
        ctx.check.expected(child(field, "value"), "a number >= 0", spec["value"])
    return Constant(value)


@DISTRIBUTIONS.register("exponential")
def _exponential(spec: Mapping[str, object], field: str, ctx: SpecContext) -> Distribution:
    ctx.check.known_keys(spec, field, (*COMMON_KEYS, "mean"))
    return Exponential(ctx.check.number(ctx.check.required(spec, "mean", field), child(field, "mean"), 0, True))


@DISTRIBUTIONS.register("weibull")
def _weibull(spec: Mapping[str, object], field: str, ctx: SpecContext) -> Distribution:
    ctx.check.known_keys(spec, field, (*COMMON_KEYS, "shape", "scale"))
    shape = ctx.check.number(ctx.check.required(spec, "shape", field), child(field, "shape"), 0, True)
    scale = ctx.check.number(ctx.check.required(spec, "scale", field), child(field, "scale"), 0, True)
    return Weibull(shape, scale)


@DISTRIBUTIONS.register("lognormal")
def _lognormal(spec: Mapping[str, object], field: str, ctx: SpecContext) -> Distribution:
    params = _params(spec, field, ctx, ("mu", "sigma"))
    if params["sigma"] < 0:
        ctx.check.expected(child(field, "sigma"), "a number >= 0", spec["sigma"])
    return Lognormal(params["mu"], params["sigma"])


@DISTRIBUTIONS.register("empirical")
def _empirical(spec: Mapping[str, object], field: str, ctx: SpecContext) -> Distribution:
    ctx.check.known_keys(spec, field, (*COMMON_KEYS, "file", "values", "trace_id"))
    if ("file" in spec) == ("values" in spec):
        ctx.check.fail(field, "an empirical distribution needs exactly one of 'file' or 'values'")
    if "values" in spec:
        raw = ctx.check.sequence(spec["values"], child(field, "values"))
        if not raw:
            ctx.check.fail(child(field, "values"), "expected at least one value")
        values = [ctx.check.number(v, f"{child(field, 'values')}[{i}]", 0) for i, v in enumerate(raw)]
        return Empirical(values)
    path = ctx.base_dir / ctx.check.string(spec["file"], child(field, "file"))
    trace_id = ctx.trace_id
    if "trace_id" in spec:
        trace_id = ctx.check.integer(spec["trace_id"], child(field, "trace_id"), 0)
    return Empirical(read_samples(path, trace_id, field=child(field, "file"), config=ctx.check.source))


def parse_distribution(value: object, field: str, ctx: SpecContext) -> Distribution:
    """A distribution from its configuration: a number (constant), or a mapping naming it or giving samples."""
    check = ctx.check
    if isinstance(value, int | float) and not isinstance(value, bool):
        return Constant(check.number(value, field, 0))
    spec = check.mapping(value, field)
    if "distribution" in spec:
        name = check.string(spec["distribution"], child(field, "distribution"))
        if name not in DISTRIBUTIONS:
            check.fail(
                child(field, "distribution"),
                f"unknown distribution '{name}'; valid: {', '.join(DISTRIBUTIONS.names())}",
            )
        parser = DISTRIBUTIONS.get(name)
    elif "file" in spec or "values" in spec:
        parser = DISTRIBUTIONS.get("empirical")
    else:
        check.fail(field, f"expected a number or a mapping with 'distribution', 'file' or 'values' (valid "
                          f"distributions: {', '.join(DISTRIBUTIONS.names())})")
    distribution = parser(spec, field, ctx)
    if "min" in spec or "max" in spec:
        low = check.number(spec.get("min", 0.0), child(field, "min"), 0)
        high = check.number(spec.get("max", math.inf), child(field, "max"), low) if "max" in spec else math.inf
        distribution = Clipped(distribution, low, high)
    return distribution
