"""The corrupt-input fuzzer: its mutants, its harness, and a seeded slice of it in CI.

The slice runs :data:`SLICE` mutants of seed :data:`SEED` (every target, in two child
processes) and must find nothing: no crash, no hang, no exception that is not the library's,
no refusal over several lines or 400 characters or not naming its file.
"""

from __future__ import annotations

import collections
import json

import pytest

from tests.corrupt import child, driver
from tests.corrupt.targets import WEIGHTS, Inputs, make_mutant

SEED = 34
SLICE = 300


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    from tests.corrupt import corpus

    root = tmp_path_factory.mktemp("corpus")
    return Inputs(root, corpus.build(root))


def test_a_mutant_is_the_same_bytes_for_its_label(inputs):
    labels = [f"{SEED}-{i}" for i in range(60)]
    first = [make_mutant(label, inputs) for label in labels]
    again = [make_mutant(label, Inputs(inputs.root, inputs.corpus)) for label in labels]
    assert [(m.target, m.what, m.data) for m in first] == \
        [(m.target, m.what, m.data) for m in again]
    assert len({m.data for m in first}) == len(first), "every mutant differs"
    for m in first:
        original = inputs.bytes(m.name) if m.in_place else None
        assert m.data != original, f"{m.label} changes its input: {m.what}"


def test_the_harness_reports_each_kind_of_finding_and_loses_no_mutant(monkeypatch):
    """Planted faults: a crash and a hang end their child, and the rest of its batch still
    runs in a new one; a foreign exception and a two-line refusal are judged; each finding
    is printed with the command that replays it."""
    faults = {1: "crash", 3: "hang", 5: "exception", 6: "message"}
    planted = {f"{SEED}-{i}": faults.get(i, "pass") for i in range(9)}
    monkeypatch.setenv(child.PLANTED, json.dumps(planted))
    lines: list[str] = []
    tally = driver.fuzz(SEED, count=9, jobs=1, batch=9, timeout=5, report=lines.append)
    assert tally.mutants == 9, "the mutants after the crash and the hang ran too"
    assert {f.label: f.kind for f in tally.findings} == \
        {f"{SEED}-{i}": kind for i, kind in faults.items()}
    by_label = {f.label: f for f in tally.findings}
    assert "killed by SIGSEGV" in by_label[f"{SEED}-1"].error
    assert "no answer in 5 s" in by_label[f"{SEED}-3"].error
    assert by_label[f"{SEED}-5"].error.startswith("KeyError")
    assert "1 line break(s)" in by_label[f"{SEED}-6"].error
    assert len(lines) == 4
    # the first child ran 0 and 1 (crashed); the second 2 and 3 (hung); the third the rest
    first = {1: 0, 3: 2, 5: 4, 6: 4}
    for line, f in zip(lines, tally.findings):
        i = int(f.label.rpartition("-")[2])
        assert line.endswith(f"replay: python -m tests.corrupt --replay {f.label} "
                             f"--after {SEED}-{first[i]}"), line


@pytest.mark.slow
def test_a_seeded_slice_runs_every_target_and_finds_nothing():
    lines: list[str] = []
    tally = driver.fuzz(SEED, count=SLICE, jobs=2, batch=SLICE // 2, timeout=60,
                        report=lines.append)
    assert tally.mutants == SLICE
    assert set(tally.targets) == set(WEIGHTS), "every target ran"
    kinds = collections.Counter(f.kind for f in tally.findings)
    assert not tally.findings, f"{dict(kinds)}:\n" + "\n".join(lines)
