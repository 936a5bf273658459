"""Fuzz one target with atheris: `python tests/fuzz/run.py TARGET [libFuzzer options] [CORPUS_DIR...]`.

clustersim's modules are instrumented for coverage, so atheris mutates inputs towards new branches. Inputs run
under `targets.FUZZ_LIMITS` (small size limits: the per-input timeout then only catches hangs). A crash (any
exception other than a clean `ClusterSimError`) stops the run with its input saved as `crash-*`; keep it in
tests/fuzz/crashes/TARGET/ as a regression test once fixed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

sys.path.insert(0, str(Path(__file__).resolve().parent))

with atheris.instrument_imports(include=["clustersim"]):
    import targets

    import clustersim.architectures.config
    import clustersim.autoscaling.scenario
    import clustersim.experiments.spec
    import clustersim.kubernetes.api
    import clustersim.kubernetes.manifests
    import clustersim.kubernetes.sources
    import clustersim.platform.load
    import clustersim.policies.slurm.conf
    import clustersim.workload.load  # noqa: F401


def main() -> None:
    name = sys.argv.pop(1)
    targets.lower_limits()
    target = targets.TARGETS[name]

    def one(data: bytes) -> None:
        targets.check(name, data)

    del target
    atheris.Setup(sys.argv, one)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
