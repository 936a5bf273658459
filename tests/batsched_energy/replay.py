"""batsched's recorded decisions, replayed: clustersim's messages are matched to the messages Batsim sent, and
each is answered with the reply batsched gave to Batsim's.

Where clustersim's delivery of one instant makes a re-written variant decide otherwise than batsched did (the
requested call that Batsim sends first, see tests/test_batsim_energy_reference.py), this checks everything clustersim
computes from the decisions: times, energy, machine states, the
energy files. The events of one instant may reach the scheduler grouped otherwise than Batsim grouped them (a
nanosecond-level matter of SimGrid's actors, see docs/energy.md): the replay then answers once the events of
Batsim's message have all arrived, and counts the regroupings. Events that never come, or come at another time,
stop the replay: that is a divergence, reported.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

Message = dict[str, Any]
TIME_TOLERANCE = 1e-3

Signature = Counter[tuple[str, str]]


def _signature(message: Message) -> Signature:
    """What must agree between Batsim's and clustersim's events: each event's type and subject."""
    signature: Signature = Counter()
    for event in message["events"]:
        data = event["data"]
        subject = str(data.get("job_id") or data.get("resources") or data.get("type") or "")
        signature[(event["type"], subject + (f"={data['state']}" if "state" in data else ""))] += 1
    return signature


class Replay:
    """A scheduler answering from `out_protocol.jsonl.gz`. `divergence` says where clustersim's events differed
    from Batsim's; `regrouped` counts Batsim messages whose events clustersim grouped differently."""

    def __init__(self, transcript: Path):
        with gzip.open(transcript, "rt") as f:
            lines = [json.loads(line) for line in f]
        self.sent = [line["msg"] for line in lines if line["dir"] == "batsim->sched"]
        self.replies = [line["msg"] for line in lines if line["dir"] == "sched->batsim"]
        self.divergence: str | None = None
        self.regrouped = 0
        self._next = 0
        self._pending: Signature = Counter()
        self._pending_messages = 0

    def __call__(self, message: Message) -> list[Message]:
        if self.divergence is not None:
            return []
        now = float(message["now"])
        self._pending += _signature(message)
        self._pending_messages += 1
        reply: list[Message] = []
        while self._next < len(self.sent):
            want = self.sent[self._next]
            needed = _signature(want)
            if abs(float(want["now"]) - now) > TIME_TOLERANCE or needed - self._pending:
                break
            self._pending -= needed
            if self._pending_messages != 1 or self._pending:
                self.regrouped += 1
            self._pending_messages = 1 if self._pending else 0
            reply += self._answer(self._next, now)
            self._next += 1
        if self._pending and not reply and self._next < len(self.sent):
            want = self.sent[self._next]
            if now > float(want["now"]) + TIME_TOLERANCE:
                self.divergence = (f"Batsim's message {self._next} (t={float(want['now']):g}, "
                                   f"{sorted(_signature(want).elements())}); clustersim has sent at t={now:g} "
                                   f"{sorted(self._pending.elements())}")
        return reply

    def _answer(self, k: int, now: float) -> list[Message]:
        # Batsim's clock runs a few nanoseconds per message ahead of exact times: shift its timestamps onto ours.
        shift = float(self.sent[k]["now"]) - now
        reply: list[Message] = []
        for event in self.replies[k]["events"]:
            data: dict[str, Any] = dict(event["data"])
            if event["type"] == "CALL_ME_LATER":
                data["timestamp"] = float(data["timestamp"]) - shift
            reply.append({"timestamp": now, "type": event["type"], "data": data})
        return reply
