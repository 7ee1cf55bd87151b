"""Loop-carried types that hold on every iteration of an `scf.while` (for ember-shape-refine).

A loop traced with a tensor of unknown rank (or `?` dims) carries that type, pinned by the
`scf.while`. Once a call's shapes make the initial values static, the carried type can be
the static one if the loop body maps values of that type to values of the same type: by
induction every iteration then has it. `keeps_types` checks this without changing the IR,
inferring the body's types from the given ones with each op's spec (an op it cannot infer
keeps its declared type, which is always sound); ember-shape-refine then retypes the loop.
Upstream MLIR has no such analysis for IRDL ops (its shape inference interfaces are C++).
"""

from __future__ import annotations

from typing import Optional, Sequence

from mlir import ir

from ember.dialects.ember.base import OpError
from ember.dialects.ember.convert import type_from_mlir
from ember.passes.ir_utils import constant_of, decoded_attrs, spec_of


def keeps_types(loop: ir.Operation, types: Sequence) -> bool:
    """Whether the scf.while `loop`, entered with values of `types` (ember TensorTypes, one
    per carried value), passes values of exactly those types to its after-region, returns
    them and yields them back."""
    types = list(types)
    before, after = (region.blocks[0] for region in loop.regions)
    if len(before.arguments) != len(types) or len(after.arguments) != len(types):
        return False
    env: dict = dict(zip(before.arguments, types))
    condition = _run(before, env)
    if condition is None or _types(list(condition.operands)[1:], env) != types:
        return False
    env.update(zip(after.arguments, types))
    yielded = _run(after, env)
    return yielded is not None and _types(list(yielded.operands), env) == types


def _run(block: ir.Block, env: dict) -> Optional[ir.Operation]:
    """Infers the types of `block`'s ember ops into `env`; returns its terminator, or None
    if an op's inference rejects the types (the loop would fail: leave it alone)."""
    ops = [op.operation for op in block.operations]
    for op in ops[:-1]:
        spec = spec_of(op)
        if op.name == "tensor.cast":
            env[op.results[0]] = _type(op.operands[0], env)  # the value keeps its type
        if spec is None or len(op.regions):
            continue  # results keep their declared types
        try:
            operands = tuple(_type(v, env) for v in op.operands)
            values = tuple(constant_of(v) for v in op.operands) if spec.uses_values else None
            results = spec.infer_types(operands, decoded_attrs(op), values)
        except (OpError, TypeError, ValueError):
            return None
        env.update(zip(op.results, results))
    return ops[-1] if ops else None


def _type(value: ir.Value, env: dict):
    found = env.get(value)
    return type_from_mlir(value.type) if found is None else found


def _types(values, env: dict) -> list:
    try:
        return [_type(v, env) for v in values]
    except TypeError:  # not an ember type (an index, an i1): no tensor the loop carries
        return []
