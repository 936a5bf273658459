"""clustersim: a deterministic discrete-event simulator of compute clusters and of the schedulers that run them."""

from clustersim._version import __version__

__all__ = ["__version__"]
