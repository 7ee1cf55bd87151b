"""A test-only pass with a planted wrong rewrite: `ember.sub(a, b)` becomes `ember.sub(b, a)`.

Loaded by tests/debug/test_find_miscompile.py (registered at import) and by the ember-opt
command a miscompile reproducer prints (`--load-pass-plugin=<this file>`).
"""

import dataclasses
from typing import ClassVar

from ember.passes.base import Pass
from ember.passes.bufferizable import PassFailure
from ember.passes.ir_utils import functions
from ember.passes.registry import register_pass
from ember.dialects.ember.verifier import iter_ops

NAME = "test-planted-swap-sub"


@register_pass
@dataclasses.dataclass(frozen=True)
class PlantedSwapSubPass(Pass):
    """sub(a, b) -> sub(b, a): wrong unless a == b (the bug the bisection must find)."""
    name: ClassVar[str] = NAME
    per_function: ClassVar[bool] = True

    def run(self, module, stats) -> None:
        for fn in functions(module):
            for op in list(iter_ops(fn)):
                if op.name == "ember.sub":
                    a, b = op.operands[0], op.operands[1]
                    op.operands[0], op.operands[1] = b, a
                    stats.add("swapped")


FAIL_NAME = "test-planted-fail-on-mul"


@register_pass
@dataclasses.dataclass(frozen=True)
class PlantedFailOnMulPass(Pass):
    """Fails on the first ember.mul (a pass failure that must leave a reproducer)."""
    name: ClassVar[str] = FAIL_NAME
    per_function: ClassVar[bool] = True

    def run(self, module, stats) -> None:
        for fn in functions(module):
            if any(op.name == "ember.mul" for op in iter_ops(fn)):
                raise PassFailure(f"{FAIL_NAME} met an ember.mul")
