"""Optional dependencies: heavy packages that only some features need are extras of the distribution.

`pip install clustersim` brings what a simulation needs; `clustersim[dask]` adds Dask campaigns and
`clustersim[parquet]` the Parquet copies of campaign tables. A feature that needs a missing extra fails with
a `MissingExtraError` naming the extra to install, never with a bare ImportError.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from clustersim.errors import MissingExtraError


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import `module`, or say which extra of clustersim provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(module, extra, feature) from None


def available(module: str) -> bool:
    """Whether `module` can be imported (an optional feature may then be used)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True
