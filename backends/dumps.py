"""Per-pass IR dumps of every trace and compile: `EMBER_DUMP_DIR=dir`.

    EMBER_DUMP_DIR=/tmp/dumps python train.py
    /tmp/dumps/mlp-1/00-traced.mlir               the trace, as recorded
    /tmp/dumps/mlp-1/01-ember-canonicalize.mlir   the module after each pass of the
    ...                                           Function's pipeline (ember-optimize's
    /tmp/dumps/mlp-1/27-ember-optimize.mlir       inner passes included)
    /tmp/dumps/mlp-compile-1/00-input.mlir        a compile for one set of input shapes:
    /tmp/dumps/mlp-compile-1/01-ember-inline.mlir the specialisation's passes, then each
    ...                                           lowering stage's passes and the stage's
    /tmp/dumps/mlp-compile-1/40-llvm.mlir         result (`NN-<stage>.mlir`), the LLVM IR
    /tmp/dumps/mlp-compile-1/41-llvmir.ll         last

Each trace's optimisation writes a folder `<function>-<n>` (n: the first free number), each
compile one `<function>-compile-<n>`: a trace compiles once per distinct static input
shapes. A compile the caches answer writes nothing (EMBER_CACHE_DISABLE=1 forces them).
A pass that fails leaves `NN-<pass>-failed.mlir`. (Upstream: MLIR's
`--mlir-print-ir-tree-dir`, Triton's `MLIR_ENABLE_DUMP`, XLA's `--xla_dump_to`.)
"""

from __future__ import annotations

import os
import re
from typing import Optional

from mlir import ir

from ember.passes.base import Statistics
from ember.passes.instrument import PassInstrumentation
from ember.passes.printing import top_level

ENV = "EMBER_DUMP_DIR"


class Dump(PassInstrumentation):
    """Writes numbered files into one folder: `write(label, text)` and, as an
    instrument, the whole module after every pass."""

    def __init__(self, directory: str):
        self.directory = directory
        self.count = 0

    def write(self, label: str, text: str, suffix: str = ".mlir") -> str:
        """Writes `text` as the next file, `NN-<label><suffix>`; returns its path."""
        safe = re.sub(r"[^A-Za-z0-9_.=-]+", "_", label)[:80]
        path = os.path.join(self.directory, f"{self.count:02d}-{safe}{suffix}")
        self.count += 1
        with open(path, "w") as f:
            f.write(text if text.endswith("\n") else text + "\n")
        return path

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        self.write(name, str(top_level(op)))

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        self.write(f"{name}-failed", top_level(op).get_asm(print_generic_op_form=True))


def open_dump(name: str) -> Optional[Dump]:
    """A Dump into a new folder `$EMBER_DUMP_DIR/<name>-<n>`, None without the variable."""
    base = os.environ.get(ENV)
    if not base:
        return None
    os.makedirs(base, exist_ok=True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "function"
    n = 1
    while True:
        directory = os.path.join(base, f"{stem}-{n}")
        try:
            os.mkdir(directory)  # atomic: two threads never share a folder
            return Dump(directory)
        except FileExistsError:
            n += 1
