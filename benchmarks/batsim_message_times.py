"""How long Batsim's inter-actor messages last on a platform: each host's 1-byte message to the master host, in
SimGrid 3.32's ptask_L07 model (the model Batsim 4.2 always sets, batsim.cpp), measured in SimGrid itself.

Batsim's actors talk to its server, on the master host, with blocking 1-byte `put`s (ipp.cpp, `message_size = 1`):
the job submitter, the request-reply actor and the waiters from the master host itself, a job's executor from the
job's first host, a machine's switching actor from that machine. The duration of such a message is what a
route-dependent message time in the fast platform model would count (docs/batsim-protocol.md, "How Batsim groups
the events of one instant"). Each message here leaves alone, from a whole second, so the printed duration is the
route's, within the clock's rounding there (below 1e-15 s).

    python benchmarks/batsim_message_times.py                  # one platform of each corpus family
    python benchmarks/batsim_message_times.py PLATFORM.xml...

Each platform runs in its own process (SimGrid has one engine per process).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "reference" / "batsim"
FAMILIES = ("ties", "profiles", "energy", "dynamic")


def measure(platform: Path) -> dict[str, float]:
    """Each host's 1-byte message to the master host, in seconds, host by host in name order."""
    from clustersim.core.simgrid_execution import ensure_simgrid, load_simgrid

    ensure_simgrid()
    sg: Any = load_simgrid()
    engine = sg.Engine(["message-times", "--cfg=host/model:ptask_L07", "--log=root.thres:critical"])
    engine.load_platform(str(platform))
    hosts = sorted(engine.all_hosts, key=lambda host: host.name)
    master = next(host for host in hosts if host.name.startswith("master"))  # the corpus's: role master
    mailbox = sg.Mailbox.by_name("server")
    times: dict[str, float] = {}

    def server() -> None:
        for _ in hosts:
            name, sent = mailbox.get()
            times[name] = float(sg.Engine.clock) - sent

    def sender(second: float) -> None:
        sg.this_actor.sleep_for(second)
        mailbox.put((sg.this_actor.get_host().name, float(sg.Engine.clock)), 1)

    sg.Actor.create("server", master, server)
    for second, host in enumerate(hosts, start=1):
        sg.Actor.create("sender", host, sender, float(second))
    engine.run()
    return {"master": times.pop(master.name), **times}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("platforms", nargs="*", type=Path, help="SimGrid platform files (default: the corpus's)")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child process: one platform, JSON
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.platforms[0])))
        return
    platforms = args.platforms or [sorted((CORPUS / family).iterdir())[0] / "platform.xml" for family in FAMILIES]
    for platform in platforms:
        output = subprocess.run([sys.executable, __file__, "--one", str(platform)], capture_output=True, text=True,
                                check=True).stdout
        times: dict[str, float] = json.loads(output.strip().splitlines()[-1])
        master = times.pop("master")
        spread: dict[float, list[str]] = {}
        for host, seconds in times.items():
            spread.setdefault(round(seconds, 12), []).append(host)
        hosts = "; ".join(f"{seconds * 1e9:.3f} ns from {len(names)} host(s) ({names[0]}...)"
                          for seconds, names in sorted(spread.items()))
        print(f"{platform}: {master * 1e9:.3f} ns between two actors of the master host; {hosts}")


if __name__ == "__main__":
    main()
