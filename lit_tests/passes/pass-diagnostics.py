# A pass's diagnostics (ember.passes.diagnostics, and MLIR's own emit_error) reach
# ember-opt's --verify-diagnostics at the ops' locations. The pass is defined and registered
# here, then ember-opt runs in this process on Inputs/pass-diagnostics.mlir.

# RUN: %python %s %S/Inputs/pass-diagnostics.mlir --verify-diagnostics --split-input-file \
# RUN:   | FileCheck %S/Inputs/pass-diagnostics.mlir
# RUN: not %python %s %S/Inputs/pass-diagnostics.mlir --split-input-file 2>&1 >/dev/null \
# RUN:   | FileCheck %s

# CHECK: pass-diagnostics.mlir:8:8: remark: 'ember.exp' op: exp(x) kept
# CHECK: pass-diagnostics.mlir:10:8: warning: 'ember.log' op: the log of a value that may be
# CHECK: pass-diagnostics.mlir:21:8: error: 'ember.sqrt' op: not supported by this target

import dataclasses
import sys
from typing import ClassVar

from ember.dialects.ember.verifier import iter_ops
from ember.passes import diagnostics
from ember.passes.base import Pass
from ember.passes.registry import register_pass
from ember.tools import ember_opt


@register_pass
@dataclasses.dataclass(frozen=True)
class DiagnosePass(Pass):
    name: ClassVar[str] = "test-diagnose"
    per_function: ClassVar[bool] = True

    def run(self, fn, stats):
        for op in iter_ops(fn):
            if op.name == "ember.exp":
                diagnostics.remark(op, "'ember.exp' op: exp(x) kept (no exp-of-log to cancel)")
            elif op.name == "ember.log":
                diagnostics.warning(op, "'ember.log' op: the log of a value that may be "
                                        "negative is NaN")
            elif op.name == "ember.sqrt":
                op.location.emit_error("'ember.sqrt' op: not supported by this target")


sys.exit(ember_opt.main([*sys.argv[1:], "-p", "builtin.module(func.func(test-diagnose))"]))
