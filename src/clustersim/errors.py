"""The errors clustersim reports to its users.

Every error a user can cause (bad input, a refused decision) is one of these, so the CLI can print one clear
line and exit with a meaningful code instead of a traceback.
"""

from __future__ import annotations


class ClusterSimError(Exception):
    """Base of every error clustersim reports on purpose."""


class InputError(ClusterSimError):
    """An input file or value is malformed: names where (file, line or field) and what was expected."""

    def __init__(self, source: str, message: str, *, line: int | None = None, field: str | None = None):
        self.source = source
        self.line = line
        self.field = field
        self.reason = message
        where = source
        if line is not None:
            where += f", line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")


class DecisionError(ClusterSimError):
    """A decision process returned a decision the core refuses; the cluster state is left untouched."""

    def __init__(self, decision: object, message: str):
        self.decision = decision
        self.reason = message
        super().__init__(f"refused decision {decision!r}: {message}")


class UnknownNameError(ClusterSimError):
    """A plugin name (policy, format...) is not registered: lists the valid ones."""

    def __init__(self, kind: str, name: str, valid: list[str]):
        self.name = name
        self.valid = valid
        super().__init__(f"unknown {kind} '{name}'; valid: {', '.join(sorted(valid))}")


class DuplicateNameError(ClusterSimError):
    """A plugin name is registered twice: the second would silently shadow the first."""

    def __init__(self, kind: str, name: str, existing: object):
        self.name = name
        owner = getattr(existing, "__qualname__", None) or type(existing).__name__
        super().__init__(f"{kind} '{name}' is already registered (by {owner})")


class PluginError(ClusterSimError):
    """A third-party plugin (`package.module:Name` or an entry point) cannot be loaded or is not usable."""

    def __init__(self, kind: str, name: str, message: str):
        self.name = name
        self.reason = message
        super().__init__(f"{kind} '{name}': {message}")


class MissingExtraError(ClusterSimError):
    """A feature needs an optional package that is not installed: names the extra of clustersim to install."""

    def __init__(self, module: str, extra: str, feature: str):
        self.module = module
        self.extra = extra
        super().__init__(
            f"{feature} needs the optional package '{module}', which is not installed: "
            f"pip install 'clustersim[{extra}]'"
        )
