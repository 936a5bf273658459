"""External decision processes over the Batsim 4 protocol (JSON messages on a ZeroMQ REQ/REP pair).

- `adapter.ExternalScheduler`: the decision process that forwards the core's events to an external scheduler
  and applies its answers; `clustersim run --external tcp://localhost:28000` uses it.
- `host.PolicyHost` / `python -m clustersim.protocols.batsim.easy`: the other side, a built-in policy served
  as an external scheduler; the reference for writing one.
- `messages`: the events of both directions, written and read; `connection`: the socket and its timeouts.

This package imports no ZeroMQ until a connection is made, so that importing its errors stays cheap.
"""

from clustersim.protocols.batsim.errors import NoAnswerError, ProtocolError
from clustersim.protocols.batsim.options import DEFAULT_ENDPOINT, ProtocolOptions

__all__ = ["DEFAULT_ENDPOINT", "NoAnswerError", "ProtocolError", "ProtocolOptions"]
