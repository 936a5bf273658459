"""The ZeroMQ link to an external scheduler: clustersim's REQ socket connects to the scheduler's REP socket.

This is Batsim's topology (`batsim -s tcp://localhost:28000`): the scheduler binds and waits, the simulator
connects and asks. Every answer is awaited for at most `timeout` seconds, and a monitor on the socket notices
when the scheduler's side of the connection goes away, so a crashed scheduler is reported at once rather than
after the timeout.
"""

from __future__ import annotations

import time

import zmq
from zmq.utils.monitor import recv_monitor_message

from clustersim.errors import InputError
from clustersim.protocols.batsim.errors import NoAnswerError


class Connection:
    """One REQ socket: `exchange` sends a request and returns its answer. Counts messages and waiting time."""

    def __init__(self, endpoint: str, timeout: float | None):
        self.endpoint = endpoint
        self.timeout = timeout if timeout is None or timeout > 0 else None
        self.nb_exchanges = 0
        self.bytes_sent = 0
        self.bytes_received = 0
        self.waiting_seconds = 0.0
        """Wall time between sending a request and receiving its answer: the decision process's share."""
        self.connected = False
        self.awaiting = False
        """A request is out and its answer has not come: a REQ socket cannot send again until it does."""
        self._context = zmq.Context()
        self._socket = self._context.socket(zmq.REQ)
        self._socket.setsockopt(zmq.LINGER, 0)
        self._monitor = self._socket.get_monitor_socket(zmq.EVENT_CONNECTED | zmq.EVENT_DISCONNECTED)
        try:
            self._socket.connect(endpoint)
        except zmq.ZMQError as error:
            self.close()
            raise InputError(
                endpoint, f"not a ZeroMQ endpoint such as {'tcp://localhost:28000'!r}: {error}"
            ) from None
        self._poller = zmq.Poller()
        self._poller.register(self._socket, zmq.POLLIN)
        self._poller.register(self._monitor, zmq.POLLIN)

    def exchange(self, request: bytes, label: str) -> bytes:
        """Send `request` and wait for the answer; `label` names the request in errors."""
        if self.awaiting:
            raise NoAnswerError(f"cannot send {label}: the scheduler never answered the previous request")
        started = time.perf_counter()
        self._socket.send(request)
        self.awaiting = True
        self.bytes_sent += len(request)
        deadline = None if self.timeout is None else started + self.timeout
        try:
            while True:
                wait_ms = None if deadline is None else max(0, int((deadline - time.perf_counter()) * 1000) + 1)
                ready = dict(self._poller.poll(wait_ms))
                if self._socket in ready:
                    answer: bytes = self._socket.recv()
                    self.awaiting = False
                    self.nb_exchanges += 1
                    self.bytes_received += len(answer)
                    return answer
                if self._monitor in ready:
                    self._read_monitor(label)
                elif deadline is not None and time.perf_counter() >= deadline:
                    raise NoAnswerError(self._timeout_message(label))
        finally:
            self.waiting_seconds += time.perf_counter() - started

    def _read_monitor(self, label: str) -> None:
        while self._monitor.poll(0):
            kind = recv_monitor_message(self._monitor)["event"]
            if kind == zmq.EVENT_CONNECTED:
                self.connected = True
            elif kind == zmq.EVENT_DISCONNECTED and self.awaiting:
                raise NoAnswerError(
                    f"the scheduler at {self.endpoint} closed the connection while {label} was waiting for "
                    "its answer: it crashed or exited"
                )

    def _timeout_message(self, label: str) -> str:
        if not self.connected:
            return (
                f"no scheduler answered at {self.endpoint} within {self.timeout:g} s ({label}): nothing is "
                "listening there; start the scheduler first (for instance "
                "`python -m clustersim.protocols.batsim.easy`)"
            )
        return f"the scheduler did not answer {label} within {self.timeout:g} s (use --timeout to wait longer)"

    def close(self) -> None:
        """Drop the sockets at once (no lingering on unsent messages)."""
        if not self._socket.closed:
            self._socket.disable_monitor()
            self._monitor.close(linger=0)
            self._socket.close(linger=0)
        self._context.term()
