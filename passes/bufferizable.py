"""Checks run before upstream passes that would abort on what Ember can express: a tensor
whose element type no memref can hold (`tensor<!ember.string>`) reaching bufferization.

`PassFailure` is how a pipeline reports a pass that failed or left invalid IR.
"""

from __future__ import annotations

from mlir import ir

from ember.dialects.ember import verifier
from ember.dialects.ember.errors import EmberError


class PassFailure(EmberError, RuntimeError):
    """A pass failed or left the module invalid; the message names the pass.

    `diagnostics` holds the located errors behind it, when there are any.
    """

    def __init__(self, message: str, diagnostics: list | None = None):
        super().__init__(message)
        self.diagnostics = diagnostics or []


def check_bufferizable(module: ir.Module) -> None:
    """PassFailure, located, at the first tensor whose element type no memref can hold
    (`tensor<!ember.string>`: strings run only on the host). Upstream bufferization builds
    such memref types unchecked, and this MLIR build aborts on an assertion."""
    verdicts: dict[str, bool] = {}

    def holdable(t: ir.Type) -> bool:
        if not isinstance(t, (ir.RankedTensorType, ir.UnrankedTensorType)):
            return True
        element = ir.ShapedType(t).element_type
        key = str(element)
        if key not in verdicts:
            try:
                ir.MemRefType.get([1], element)
                verdicts[key] = True
            except ir.MLIRError:
                verdicts[key] = False
        return verdicts[key]

    with module.context, ir.Location.unknown():
        for op in verifier.iter_ops(module.operation):
            types = [v.type for v in op.results] + [a.type for r in op.regions
                                                    for b in r.blocks for a in b.arguments]
            signature = op.attributes["function_type"] if "function_type" in op.attributes \
                else None  # declarations have no block arguments
            if isinstance(signature, ir.TypeAttr) and \
                    isinstance(signature.value, ir.FunctionType):
                types += list(signature.value.inputs) + list(signature.value.results)
            bad = next((t for t in types if not holdable(t)), None)
            if bad is not None:
                message = (f"'{op.name}' has a value of type {bad}, which cannot be "
                           "bufferized (only the host runs tensors of this element type)")
                raise PassFailure(message, [verifier.Diagnostic.at(op.location, message)])
