"""Every bad input of the table in tests/bad_inputs.py is refused cleanly, and docs/bad-input.md shows it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bad_inputs import CASES, DOC, Case, collect, message, render, run_case
from clustersim.exit_codes import EXIT_BAD_INPUT


@pytest.mark.parametrize("case", CASES, ids=[f"{c.reader}: {c.what}" for c in CASES])
def test_bad_input_is_refused_with_one_clean_line_naming_the_file(case: Case, tmp_path: Path) -> None:
    outcome = run_case(case, tmp_path)
    assert outcome.code == EXIT_BAD_INPUT, outcome.stderr
    assert "Traceback" not in outcome.stderr
    text = message(outcome)
    assert text, outcome.stderr
    named = case.file.split("/")[0] if case.reader != "output directory" else "out"
    assert named in text.split(":")[0], text


def test_the_bad_input_document_is_generated_from_these_cases() -> None:
    expected = render([message(o) for o in collect()])
    assert DOC.read_text() == expected, "docs/bad-input.md is stale: run `python tests/bad_inputs.py`"
