"""The built-in `conservative` decides as batsched 1.4's conservative_bf, message for message.

Each conservative_bf case of the reference corpus (../shared/reference/batsim) holds the whole exchange between
Batsim and batsched (`out_protocol.jsonl.gz`). Batsim's messages are given, in order, to the built-in policy
hosted behind the protocol (`protocols/batsim/host.py`), and every reply must be batsched's: the same
rejections and starts, in the same order, on the same hosts. This checks the policy on Batsim's own grouping of
events, whatever clustersim's rounds do (tests/test_batsim_corpus.py runs the whole simulations).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from batsim_reference import case_info, cases
from clustersim.errors import InputError
from clustersim.policies.registry import create_policy
from clustersim.protocols.batsim.host import PolicyHost

CASES = [c for family in ("ties", "profiles") for c in cases(family) if case_info(c)["variant"] == "conservative_bf"]


def _decisions(message: dict[str, object]) -> list[tuple[str, str]]:
    events = message["events"]
    assert isinstance(events, list)
    return [(e["type"], json.dumps(e["data"], sort_keys=True)) for e in events]


def test_the_corpus_has_the_conservative_cases() -> None:
    assert len(CASES) == 18


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_conservative_replies_to_batsims_messages_as_batsched(case: Path) -> None:
    with gzip.open(case / "out_protocol.jsonl.gz", "rt") as f:
        transcript = [json.loads(line) for line in f]
    requests = [line["msg"] for line in transcript if line["dir"] == "batsim->sched"]
    replies = [line["msg"] for line in transcript if line["dir"] == "sched->batsim"]
    host = PolicyHost(create_policy("conservative"))
    for number, (request, reply) in enumerate(zip(requests, replies, strict=True)):
        ours = json.loads(host.answer(json.dumps(request).encode()))
        assert _decisions(ours) == _decisions(reply), f"message {number} (t={request['now']})"
        if host.finished:
            break


def test_rjms_delay_is_an_option_in_seconds() -> None:
    """batsched's `--rjms_delay` (5 s by default) is the policy option `rjms_delay`; anything but a number of
    seconds >= 0 is refused with a message naming it."""
    assert create_policy("conservative", rjms_delay="0").backfilling.rjms_delay == 0.0  # type: ignore[attr-defined]
    with pytest.raises(InputError, match=r"rjms_delay.*'soon' is not a number of seconds >= 0"):
        create_policy("conservative", rjms_delay="soon")
