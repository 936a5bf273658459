"""One plugin mechanism for every kind of named strategy: policies, power policies, readers, traffic, architectures.

A `Registry` maps names to plugins of one kind. It refuses a name registered twice (two modules cannot silently
shadow each other), lists the valid names when one is unknown, and finds third-party plugins two ways:

- `package.module:Attribute`, a dotted path given where a name is expected (`--policy mypkg.lifo:Lifo`),
  searched on `sys.path` and then in the current directory;
- an entry point of the registry's group, declared by an installed distribution:

      [project.entry-points."clustersim.policies"]
      lifo = "mypkg.lifo:Lifo"
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

from clustersim.errors import DuplicateNameError, PluginError, UnknownNameError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

T = TypeVar("T")


class Registry(Generic[T]):
    """Names to plugins of one kind (`kind` names it in errors: "policy", "workload format"...).

    `group` is the entry-point group of third-party plugins; `builtins` a module that registers the built-in
    plugins when imported, loaded on first lookup (so that registering modules may import the registry). A
    name registered before the built-ins load that is also a built-in's makes that lookup fail, naming both.
    """

    def __init__(self, kind: str, *, group: str | None = None, builtins: str | None = None) -> None:
        self.kind = kind
        self.group = group
        self._builtins = builtins
        self._builtins_lock = threading.RLock()
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """A decorator that registers its target under `name`."""

        def decorate(entry: T) -> T:
            self.add(name, entry)
            return entry

        return decorate

    def add(self, name: str, entry: T) -> None:
        if name in self._entries:
            raise DuplicateNameError(self.kind, name, self._entries[name])
        self._entries[name] = entry

    def names(self) -> list[str]:
        """Every valid name, sorted: the registered plugins' and the installed entry points'."""
        return sorted(self._ordered_names())

    def items(self) -> dict[str, T]:
        """Every plugin by name (installed entry points loaded): the registered ones in registration order
        (for file formats, the order in which they are tried), then the installed ones by name."""
        return {name: self.get(name) for name in self._ordered_names()}

    def _ordered_names(self) -> list[str]:
        self._load_builtins()
        installed = sorted({point.name for point in self._entry_points()} - self._entries.keys())
        return [*self._entries, *installed]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def get(self, name: str) -> T:
        """The plugin registered as `name`, found as an entry point, or imported from `package.module:Name`."""
        self._load_builtins()
        entry = self._entries.get(name)
        if entry is not None:
            return entry
        if ":" in name:
            return self._import(name)
        for point in self._entry_points():
            if point.name == name:
                loaded: T = point.load()
                self._entries[name] = loaded
                return loaded
        raise UnknownNameError(self.kind, name, self.names())

    def _import(self, path: str) -> T:
        module_name, _, attribute = path.partition(":")
        if os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())  # last: a module of the current directory never shadows an installed one
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise PluginError(self.kind, path, f"cannot import module '{module_name}' ({error})") from None
        try:
            found: T = getattr(module, attribute)
        except AttributeError:
            raise PluginError(self.kind, path, f"module '{module_name}' has no attribute '{attribute}'") from None
        return found

    def _entry_points(self) -> list[EntryPoint]:
        if not self.group:
            return []
        from importlib.metadata import entry_points  # costs 20 ms: only when a name is looked up

        return list(entry_points(group=self.group))

    def _load_builtins(self) -> None:
        """Import the built-ins once; other threads wait until they are all registered (Dask runs threads)."""
        if self._builtins is None:
            return
        with self._builtins_lock:
            if self._builtins is not None:
                importlib.import_module(self._builtins)  # the same thread may come back here: it is re-entrant
                self._builtins = None
