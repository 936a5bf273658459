"""clustersim: a deterministic discrete-event simulator of compute clusters and of the schedulers that run them."""

__version__ = "0.1.0"
