"""Every registered op is round-tripped by a lit test in lit_tests/dialect/ (not only mentioned).

tests/dialects/test_coverage.py asks for a mention in any lit test; this asks for more: the op
appears as an operation (`"ember.x"(`) in one of the round-trip files, whose RUN lines parse,
print and re-parse it in both the custom and the generic form.
"""

import pathlib
import re

import pytest

from ember.dialects.ember import REGISTRY

DIALECT_TESTS = pathlib.Path(__file__).resolve().parents[2] / "lit_tests" / "dialect"
ROUND_TRIP_RUN_LINES = (
    "// RUN: ember-opt %s | FileCheck %s",
    "// RUN: ember-opt %s | ember-opt | FileCheck %s",
    "// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s",
    "// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC",
)


def _round_trip_files() -> list[pathlib.Path]:
    return sorted(p for p in DIALECT_TESTS.glob("*.mlir") if not p.name.endswith("invalid.mlir"))


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_op_has_a_round_trip_lit_test(name):
    pattern = re.compile(rf'"{re.escape(name)}"\(')
    hits = [p.name for p in _round_trip_files() if pattern.search(p.read_text())]
    assert hits, f"no file in lit_tests/dialect/ round-trips {name}"


@pytest.mark.parametrize("path", _round_trip_files(), ids=lambda p: p.name)
def test_round_trip_file_has_every_run_line(path):
    text = path.read_text()
    missing = [line for line in ROUND_TRIP_RUN_LINES if line not in text]
    assert not missing, f"{path.name} lacks {missing}"
