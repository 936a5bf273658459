"""A decision process in JavaScript (Node.js with the `zeromq` npm package) drives clustersim: the protocol is
language independent. The test installs `zeromq` itself, into pytest's cache directory."""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

from clustersim.cli import main
from conftest import csv_rows

EXAMPLES = Path(str(resources.files("clustersim") / "examples"))

SCHEDULER = r"""
// First come, first served on the lowest free hosts; jobs larger than the platform are rejected on arrival.
const zmq = require("zeromq");

async function main() {
  const socket = new zmq.Reply();
  await socket.bind("tcp://127.0.0.1:*");
  console.error("listening on " + socket.lastEndpoint);

  let size = 0;
  const free = new Set();
  const queue = [];
  let rejected = [];
  const running = new Map();
  let finished = false;
  const handlers = {
    SIMULATION_BEGINS: (data) => {
      size = data.nb_compute_resources;
      for (let id = 0; id < size; id++) free.add(id);
    },
    JOB_SUBMITTED: (data) => {
      if (data.job.res > size) rejected.push(data.job_id);
      else queue.push({ id: data.job_id, res: data.job.res });
    },
    JOB_COMPLETED: (data) => {
      for (const id of running.get(data.job_id)) free.add(id);
      running.delete(data.job_id);
    },
    SIMULATION_ENDS: () => { finished = true; },
  };

  for await (const [request] of socket) {
    const message = JSON.parse(request.toString());
    for (const event of message.events) (handlers[event.type] || (() => {}))(event.data);
    const decisions = [];
    const decide = (type, data) => decisions.push({ timestamp: message.now, type, data });
    for (const id of rejected) decide("REJECT_JOB", { job_id: id });
    rejected = [];
    while (queue.length > 0 && queue[0].res <= free.size) {
      const job = queue.shift();
      const alloc = [...free].sort((a, b) => a - b).slice(0, job.res);
      for (const id of alloc) free.delete(id);
      running.set(job.id, alloc);
      decide("EXECUTE_JOB", { job_id: job.id, alloc: alloc.join(" ") });
      decide("SET_JOB_METADATA", { job_id: job.id, metadata: "node" });
    }
    await socket.send(JSON.stringify({ now: message.now, events: finished ? [] : decisions }));
    if (finished) break;
  }
  socket.close();
}

main().catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.fixture(scope="session")
def node_modules(pytestconfig: pytest.Config) -> Path:
    """`node_modules` holding the zeromq package, installed with npm on first use."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("Node.js (node and npm) is not installed on this machine")
    prefix = pytestconfig.cache.mkdir("node-zeromq-6")
    if not (prefix / "node_modules" / "zeromq" / "package.json").exists():
        installed = subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "zeromq@6"],
            capture_output=True, text=True, check=False, timeout=600,
        )
        assert installed.returncode == 0, f"could not install zeromq: {installed.stdout}{installed.stderr}"
    return prefix / "node_modules"


def test_a_nodejs_scheduler_gives_clustersims_fcfs_schedule(node_modules: Path, tmp_path: Path) -> None:
    script = tmp_path / "fcfs.js"
    script.write_text(SCHEDULER)
    process = subprocess.Popen(
        ["node", str(script)], env={**os.environ, "NODE_PATH": str(node_modules)},
        stderr=subprocess.PIPE, text=True,
    )
    common = ["run", "-p", str(EXAMPLES / "platform.yaml"), "-w", str(EXAMPLES / "workload.json"), "-q", "--no-gantt"]
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        assert line.startswith("listening on "), line + process.stderr.read()
        assert main([*common, "-s", line.split()[-1], "-o", str(tmp_path / "node")]) == 0
        assert process.wait(timeout=20) == 0
    finally:
        process.kill()
        process.wait()
    assert main([*common, "--policy", "fcfs", "-o", str(tmp_path / "fcfs")]) == 0

    theirs = csv_rows(tmp_path / "node" / "jobs.csv")
    ours = csv_rows(tmp_path / "fcfs" / "jobs.csv")
    assert {r["metadata"] for r in theirs if r["final_state"] != "REJECTED"} == {"node"}
    for row in theirs + ours:
        del row["metadata"]
    assert theirs == ours
