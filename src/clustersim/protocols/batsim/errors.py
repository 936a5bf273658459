"""What goes wrong on the wire with an external scheduler, as errors the CLI maps to their own exit codes.

A decision the core refuses (busy hosts, unknown job) stays a `DecisionError`; these errors are about the
conversation itself: a message that breaks the protocol, or a scheduler that stops answering.
"""

from __future__ import annotations

from clustersim.errors import ClusterSimError


class ProtocolError(ClusterSimError):
    """The external scheduler sent something the Batsim protocol does not allow (or clustersim does not support)."""


class NoAnswerError(ProtocolError):
    """The external scheduler did not answer: it timed out, crashed, closed its socket or was never there."""
