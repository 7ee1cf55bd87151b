"""Out-of-tree passes for the lit tests of lit_tests/tools/ (load-pass-plugin.mlir,
reproducer.mlir, bisect-against-interpreter.mlir), loaded with `--load-pass-plugin`, and
for tests/tools/test_lit_plugins.py (config.ember_plugins / EMBER_LIT_PLUGINS)."""

import dataclasses
from typing import ClassVar

from ember.passes.base import Pass
from ember.passes.bufferizable import PassFailure
from ember.passes.ir_utils import functions
from ember.passes.registry import register_pass
from ember.dialects.ember.verifier import iter_ops


@register_pass
@dataclasses.dataclass(frozen=True)
class RenamePass(Pass):
    """Renames each function @f to @<prefix>f: a visible change that needs no new ops."""
    name: ClassVar[str] = "test-plugin-rename"
    prefix: str = "plugin_"

    def run(self, module, stats) -> None:
        from mlir import ir
        for fn in functions(module):
            old = ir.StringAttr(fn.attributes["sym_name"]).value
            fn.attributes["sym_name"] = ir.StringAttr.get(self.prefix + old)
            stats.add("renamed")


@register_pass
@dataclasses.dataclass(frozen=True)
class FailOnMulPass(Pass):
    """Fails on the first ember.mul: a pass failure for the reproducer tests."""
    name: ClassVar[str] = "test-plugin-fail-on-mul"
    per_function: ClassVar[bool] = True

    def run(self, module, stats) -> None:
        for fn in functions(module):
            for op in iter_ops(fn):
                if op.name == "ember.mul":
                    raise PassFailure("test-plugin-fail-on-mul met an ember.mul")


@register_pass
@dataclasses.dataclass(frozen=True)
class SwapSubPass(Pass):
    """sub(a, b) -> sub(b, a): a planted miscompile for bisect-against-interpreter.mlir."""
    name: ClassVar[str] = "test-plugin-swap-sub"
    per_function: ClassVar[bool] = True

    def run(self, module, stats) -> None:
        for fn in functions(module):
            for op in iter_ops(fn):
                if op.name == "ember.sub":
                    a, b = op.operands[0], op.operands[1]
                    op.operands[0], op.operands[1] = b, a
