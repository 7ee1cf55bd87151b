"""Verification of ember ops beyond what IRDL checks: re-run each spec's type inference.

MLIR (through the generated IRDL) checks operand and attribute *kinds*; this pass checks
that operand types are acceptable, attributes are well-formed and the declared result types
refine the inferred ones (`tensor<4xf32>` may refine an inferred `tensor<?xf32>`). Messages
follow MLIR style: `'ember.add' op operand types tensor<4xf32> and tensor<3xf32> are not
broadcast-compatible`. Upstream ops that ember emits (`tensor.concat`) are checked too.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from mlir import ir

from ember.dialects.ember.base import REGISTRY, OpError
from ember.dialects.ember.convert import attr_from_mlir, type_from_mlir
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.partial import known_operands
from ember.dialects.ember.types import ShapeError, types_compatible


@dataclasses.dataclass(frozen=True)
class Diagnostic:
    """One error with its source position (line/col are 0 when the location is unknown)."""

    message: str
    filename: str = ""
    line: int = 0
    col: int = 0
    severity: str = "error"

    @classmethod
    def at(cls, location: ir.Location, message: str, severity: str = "error"):
        file_loc = _file_location(location)
        if file_loc is None:
            return cls(message, severity=severity)
        return cls(message, file_loc.filename, file_loc.start_line, file_loc.start_col,
                   severity)

    def format(self, filename: str | None = None) -> str:
        name = filename or self.filename or "<unknown>"
        where = f"{name}:{self.line}:{self.col}: " if self.line else f"{name}: "
        return f"{where}{self.severity}: {self.message}"


def where(location: ir.Location) -> str:
    """`file:line` of the source position in `location` (as errors name the user's code),
    else the location as MLIR prints it."""
    d = Diagnostic.at(location, "")
    return f"{d.filename}:{d.line}" if d.line else str(location)


def has_file(location: ir.Location) -> bool:
    """Whether `location` holds a source position (`where` names it as `file:line`)."""
    return _file_location(location) is not None


def _file_location(location: ir.Location, depth: int = 0):
    """The file position inside a (possibly named, call-site or fused) location."""
    if depth > 32:
        return None
    try:
        if location.is_a_file():
            return location
        if location.is_a_name():
            return _file_location(location.child_loc, depth + 1)
        if location.is_a_callsite():
            return _file_location(location.callee, depth + 1)
        if location.is_a_fused():
            for inner in location.locations:
                found = _file_location(inner, depth + 1)
                if found is not None:
                    return found
    except (AttributeError, RuntimeError):
        pass
    return None


class VerificationError(EmberError, ValueError):
    """A module failed verification; `diagnostics` lists every error found."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = diagnostics
        super().__init__("\n".join(d.format() for d in diagnostics))


_ADVANCE, _INTERRUPT = ir.WalkResult.ADVANCE, ir.WalkResult.INTERRUPT


def iter_ops(op: ir.Operation) -> list[ir.Operation]:
    """All operations nested in `op` (pre-order, `op` itself left out), as `ir.Operation`.

    MLIR walks them in C++ (a fifth of the time or less that a Python walk of regions,
    blocks and operations took) and the list is complete before the caller sees it: a
    caller may erase, move or add ops as it goes, but must skip an op it erased and the
    ops nested in one (freed memory: a crash, not an exception). The C++ walk recurses once
    per nesting level, as MLIR's printer does, in no Python frame: deep nesting cannot
    exhaust Python's recursion limit (IR 5,000 levels deep built by Python code walks:
    test_iter_ops.py; parsed IR nests at most `parsing.MAX_NESTING` deep).
    """
    ops: list = []
    _walk(op, lambda o: ops.append(o) or _ADVANCE)
    del ops[0]  # `op` itself
    return ops


def find_op(op: ir.Operation, predicate: Callable[[ir.Operation], object]
            ) -> Optional[ir.Operation]:
    """The first op nested in `op` (pre-order, `op` left out) that `predicate` holds for,
    or None: the walk stops there (`any`/`all` over `iter_ops` without walking the rest).
    `predicate` runs inside MLIR's walk, so it must not change the IR; an exception it
    raises is raised as is (MLIR would make it a RuntimeError)."""
    found: list = []
    raised: list = []
    started: list = []

    def visit(o: ir.Operation) -> ir.WalkResult:
        if not started:  # `op` itself comes first
            started.append(o)
            return _ADVANCE
        try:
            if predicate(o):
                found.append(o)
                return _INTERRUPT
        except BaseException as e:  # raised below, once the walk has returned
            raised.append(e)
            return _INTERRUPT
        return _ADVANCE
    _walk(op, visit)
    if raised:
        raise raised.pop()
    return found[0] if found else None


def _walk(op: ir.Operation, visit: Callable[[ir.Operation], ir.WalkResult]) -> None:
    """MLIR's pre-order walk: `visit(o)` for `op` and then every op nested in it, in C++;
    `visit` returns a WalkResult (INTERRUPT stops the walk). The one walk of the two
    above: tests count the op visits of the passes here."""
    op.walk(visit, ir.WalkOrder.PRE_ORDER)


def verify_op(op: ir.Operation) -> None:
    """Checks one op against its spec; raises OpError (or TypeError for foreign types)."""
    spec = REGISTRY[op.name]
    attrs = {}
    for name in op.attributes:
        if name not in spec.attrs and "." not in name:
            raise OpError(spec.name, f"has no attribute '{name}'; expected "
                          f"{sorted(spec.attrs) or 'none'}")
    for name, slot in spec.attrs.items():
        if name in op.attributes:
            attrs[name] = attr_from_mlir(spec.name, name, slot, op.attributes[name])
        elif not slot.required:
            attrs[name] = slot.default
        else:
            raise OpError(spec.name, f"requires attribute '{name}'")
    operand_types = tuple(type_from_mlir(v.type) for v in op.operands)
    values = known_operands(spec, op.operands) if spec.uses_values else None
    inferred = spec.infer_types(operand_types, attrs, values)
    declared = tuple(type_from_mlir(r.type) for r in op.results)
    if len(declared) != len(inferred):
        raise OpError(spec.name, f"declares {len(declared)} results but produces "
                      f"{len(inferred)}")
    for i, (d, t) in enumerate(zip(declared, inferred)):
        if not types_compatible(d, t):
            raise OpError(spec.name, f"result #{i} has type {d} but the operands give {t}")


def verify(module: ir.Module | ir.Operation) -> list[Diagnostic]:
    """Verifies every ember op in `module`; returns the diagnostics (empty when valid).

    Call after MLIR's own `operation.verify()` succeeded.
    """
    root = module.operation
    found = []
    for op in iter_ops(root):
        if op.name not in REGISTRY:
            continue
        try:
            verify_op(op)
        except OpError as e:
            found.append(Diagnostic.at(op.location, str(e)))
        except (TypeError, ShapeError) as e:  # not a tensor, a non-ember element type, or
            found.append(Diagnostic.at(op.location, f"'{op.name}' op {e}"))  # too large
    return found


def check(module: ir.Module | ir.Operation) -> None:
    """Verifies with MLIR and then the specs; raises VerificationError on failure."""
    try:
        module.operation.verify()
    except ir.MLIRError as e:
        raise VerificationError([Diagnostic.at(d.location, d.message)
                                 for d in e.error_diagnostics]) from None
    problems = verify(module)
    if problems:
        raise VerificationError(problems)
