"""The reference external scheduler: EASY backfilling over the Batsim protocol.

    python -m clustersim.protocols.batsim.easy                 # listens on tcp://127.0.0.1:28000 (loopback)
    clustersim run -p platform.yaml -w workload.json --external tcp://localhost:28000

It runs clustersim's own `easy` policy behind a REP socket (see `host.py`), so the schedule it produces over the
protocol is the one the in-process `easy` produces: the same jobs.csv, byte for byte. Read `host.py` to see
what a decision process must do; any language with a ZeroMQ binding and a JSON parser can do the same.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from clustersim.protocols.batsim.host import main as host_main


def main(argv: Sequence[str] | None = None) -> int:
    return host_main(argv, policy="easy")


if __name__ == "__main__":
    sys.exit(main())
