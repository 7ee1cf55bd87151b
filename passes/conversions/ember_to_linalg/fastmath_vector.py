"""fastmath's builders on vectors: `kit` gives the `Kit` of a scalar or vector float type.

fastmath's kernels are written once, over a `Kit` (fastmath_kit.py), and emit arith ops on
whatever type the kit has: a scalar f32 in a `linalg.generic` body, or `vector<N x f32>`
in the vector variants the CPU backend gives LLVM's vectoriser (backends/cpu/
vector_variants.py), where a branch can depend on all lanes at once. `VectorKit` differs
from `Kit` only in its types and in building its constants as splats; `shaped` gives the
type with another element and the same lanes.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith

from ember.passes.conversions.ember_to_linalg.fastmath_kit import Kit

__all__ = ["VectorKit", "is_vector", "kit", "shaped"]


def is_vector(t: ir.Type) -> bool:
    return t.typeid == ir.VectorType.static_typeid


def shaped(t: ir.Type, element: ir.Type) -> ir.Type:
    """`element`, or a vector of it with the lanes of `t` if `t` is a vector."""
    if is_vector(t):
        return ir.VectorType.get(ir.VectorType(t).shape, element)
    return element


def kit(t: ir.Type, element: str | None = None) -> Kit:
    """The Kit of `t` (f32, f64 or a vector of them), or of `element` ("f32" or "f64") with
    the lanes of `t`."""
    if not is_vector(t):
        return Kit(t if element is None else _float(element))
    vt = ir.VectorType(t)
    return VectorKit(vt.element_type if element is None else _float(element), vt.shape)


def _float(spelling: str) -> ir.Type:
    if spelling == "f32":
        return ir.F32Type.get()
    if spelling == "f64":
        return ir.F64Type.get()
    raise TypeError(f"fastmath builds f32 or f64, not {spelling}")


class VectorKit(Kit):
    """Kit's builders on `vector<shape x element>` (element f32 or f64)."""

    def __init__(self, element: ir.Type, shape):
        super().__init__(element)  # validates the element, sets its constants
        self.element, self.element_int = element, self.it
        self.ft = ir.VectorType.get(list(shape), element)
        self.it = ir.VectorType.get(list(shape), self.element_int)

    def c(self, v: float) -> ir.Value:
        attr = ir.DenseElementsAttr.get_splat(self.ft, ir.FloatAttr.get(self.element, float(v)))
        return arith.ConstantOp(self.ft, attr).result

    def i(self, v: int) -> ir.Value:
        width = 64 if self.wide else 32
        v = int(v) & ((1 << width) - 1)
        v = v - (1 << width) if v >> (width - 1) else v
        attr = ir.DenseElementsAttr.get_splat(self.it, ir.IntegerAttr.get(self.element_int, v))
        return arith.ConstantOp(self.it, attr).result
