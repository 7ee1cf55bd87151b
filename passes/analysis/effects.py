"""What an op may do: the one effects model of passes, lowerings and backends.

In the spirit of xDSL's effect interfaces, each question has one answer here:

- **reads and writes**: an `ember.assign_*` op writes its variable (a resource argument),
  `ember.read_variable` reads it, a `func.call` may write any (`ANY`), a region op does
  what the ops it holds do (`own_writes`, `written_resources`, `written_map`,
  `assigned_variables`);
- **purity**: no effects at all, so the op may be erased when unused, merged or moved
  (`is_pure`, `pure_ops`), evaluable ahead of time on constants (`foldable`) and, when it
  is not random either, from its operands' values alone (`computable`);
- **failure**: whether the op may raise at run time for some operand values (`may_fail`),
  from its spec's totality (`Op.total`) and the upstream ops known to be total.

CSE and LICM ask about writes, DCE, canonicalization and LICM about purity, LICM about
failure (an op that may fail is not hoisted to where it might not have run), constant
folding about `foldable`, the known-values walk and the CPU backend's row splitting about
`computable`, the variable lowering about `assigned_variables`.
Questions about an op with regions walk what it holds once; asking about every op of a
function uses `pure_ops` / `written_map`, one bottom-up walk each.
"""

from __future__ import annotations

from typing import Optional

from mlir import ir

from ember.dialects.ember.base import Op, OpError, Trait
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.partial import known_operands
from ember.dialects.ember.types import TensorType
from ember.dialects.ember.verifier import find_op, iter_ops
from ember.passes.ir_utils import STRUCTURAL, constant_of, decoded_attrs, op_id, spec_of

# Upstream ops the tracer emits that have no effects.
PURE_UPSTREAM = frozenset({"tensor.extract", "tensor.cast", "tensor.from_elements",
                           "tensor.concat", "arith.constant", "arith.index_cast"})
# Region ops with no effects of their own: they are what they hold.
REGION_OPS = frozenset({"scf.if", "scf.while", "scf.for", "scf.execute_region"})
# Upstream ops the tracer emits that cannot fail at run time.
TOTAL_UPSTREAM = frozenset({"arith.constant", "arith.index_cast", "tensor.from_elements"})


READ = "ember.read_variable"
ANY = "<any variable>"  # in a written-set: the op may write every variable
CALLS = frozenset({"func.call", "func.call_indirect"})


def is_resource(value: ir.Value) -> bool:
    return str(value.type).startswith("!ember.resource<")


def written_resources(op: ir.Operation) -> frozenset:
    """The resource values `op` (or anything nested in it) may write; ANY for unknown code."""
    written = set()
    for o in [op, *iter_ops(op)]:
        written.update(own_writes(o))
    return frozenset({ANY}) if ANY in written else frozenset(written)


def written_map(root: ir.Operation) -> dict[int, frozenset]:
    """`written_resources` of every op with regions nested in `root`, by `op_id`, in one
    bottom-up walk (asking each loop of a nest would walk the inner loops again at every
    level). Valid while no op that writes is added or removed."""
    written: dict = {}
    for op in reversed(iter_ops(root)):  # an op comes after everything it holds
        if not len(op.regions):
            continue
        mine = set(own_writes(op))
        for region in op.regions:
            for block in region.blocks:
                for child in block.operations:
                    child = child.operation
                    mine.update(written[op_id(child)] if len(child.regions)
                                else own_writes(child))
        written[op_id(op)] = frozenset({ANY}) if ANY in mine else frozenset(mine)
    return written


def _assigned(op: ir.Operation, spec: type[Op]) -> frozenset:
    """The variables an ember op writes: its resource operands (by the spec, so also once
    the lowering has retyped resources), unless it only reads."""
    if not spec.has(Trait.SIDE_EFFECTING) or op.name == READ:
        return frozenset()
    return frozenset(v for v, name in zip(op.operands, spec.operands)
                     if name in spec.resource_operands)


def own_writes(op: ir.Operation) -> frozenset:
    """What `op` itself may write, not counting its regions."""
    spec = spec_of(op)
    if spec is not None:
        return _assigned(op, spec)
    if op.name in CALLS or any(is_resource(v) for v in op.operands):
        return frozenset({ANY})
    return frozenset()


def _own_pure(op: ir.Operation) -> bool:
    """No effects of the op itself, not counting the ops its regions hold."""
    spec = spec_of(op)
    if spec is not None:
        return spec.has(Trait.PURE)
    return op.name in PURE_UPSTREAM or op.name in REGION_OPS


def is_pure(op: ir.Operation) -> bool:
    """No side effects: the op may be erased when unused, merged or moved.

    A region op is pure when every op nested in it is, judged on its own effects in one
    walk (linear in what it holds, however deep) that stops at the first impure one."""
    if not _own_pure(op):
        return False
    impure = find_op(op, lambda inner: not (_own_pure(inner) or inner.name in STRUCTURAL))
    return impure is None


def pure_ops(root: ir.Operation, total: bool = False) -> set[int]:
    """The `op_id`s of the ops nested in `root` that `is_pure` accepts (and, with `total`,
    that cannot fail either: `may_fail`), in one bottom-up walk.

    An unused op may be erased only when it is pure and total: erasing one that may fail
    would lose the error eager raises. Asking `is_pure` of every op of a nest would walk
    each level's contents again (time quadratic in the depth); this visits each op once.
    The set describes the ops as they are now: rewrites after the call are not reflected.
    """
    ops = iter_ops(root)
    clean: dict = {}  # op_id -> neither the op nor anything nested in it has effects
    safe: dict = {}  # op_id -> neither the op nor anything nested in it may fail
    pure = set()
    for op in reversed(ops):  # pre-order reversed: an op comes after everything it holds
        key = op_id(op)
        kids = [op_id(child.operation) for region in op.regions for block in region.blocks
                for child in block.operations]
        own = _own_pure(op)
        clean[key] = (own or op.name in STRUCTURAL) and all(clean[k] for k in kids)
        if total:
            safe[key] = not _own_may_fail(op) and all(safe[k] for k in kids)
        if own and clean[key] and (not total or safe[key]):
            pure.add(key)
    return pure


def may_fail(op: ir.Operation) -> bool:
    """Whether `op` may raise at run time for some operand values (shapes that only run
    time knows, an integer division by zero, an index out of range).

    An ember op's spec decides (`Op.total`, given the operand types, attributes and the
    constant operands); an upstream op may fail unless it is known total; a region op may
    if anything it holds may (one walk, up to the first op that may).
    """
    if len(op.regions):
        return op.name not in REGION_OPS or find_op(op, _own_may_fail) is not None
    return _own_may_fail(op)


def _own_may_fail(op: ir.Operation) -> bool:
    if op.name in STRUCTURAL or op.name in REGION_OPS:
        return False
    spec = spec_of(op)
    try:
        if spec is None:
            return not _upstream_total(op)
        types = tuple(type_from_mlir(v.type) for v in op.operands)
    except (TypeError, ValueError):
        return True  # a type Ember does not know: assume the worst
    values, attrs = tuple(constant_of(v) for v in op.operands), decoded_attrs(op)
    # total for its (verified) types, unless these types make it invalid: it raises then
    return not spec.total(types, attrs, values) or op_error(op, spec, types, attrs) is not None


def _upstream_total(op: ir.Operation) -> bool:
    if op.name in TOTAL_UPSTREAM:
        return True
    if op.name == "tensor.extract":  # without indices (a rank-0 tensor) nothing is checked
        return len(op.operands) == 1
    if op.name == "tensor.cast":  # total when it only forgets static sizes
        source, target = (type_from_mlir(v.type).shape for v in (op.operands[0], op.results[0]))
        return source is not None and target is not None and len(source) == len(target) \
            and all(t is None or s == t for s, t in zip(source, target))
    return False


def foldable(spec: Optional[type[Op]]) -> bool:
    """Whether an op of this spec may be evaluated ahead of time on constant operands
    (constant folding): a pure ember op without effects; a random op qualifies, being a
    function of its seed operand."""
    return spec is not None and spec.has(Trait.PURE) and not spec.has(Trait.SIDE_EFFECTING)


def computable(spec: Optional[type[Op]]) -> bool:
    """`foldable` and not random: its values follow from its operands' values alone, so
    the known-values walk may compute them and the CPU backend may split it by rows."""
    return foldable(spec) and not spec.has(Trait.RANDOM)


def assigned_variables(op: ir.Operation) -> frozenset:
    """The resource values that `ember.assign_*` ops nested in `op`'s regions write (calls
    not counted: after inlining, what remains are host callbacks, which take no
    variables)."""
    found = set()
    for inner in iter_ops(op):
        spec = spec_of(inner)
        if spec is not None:
            found |= _assigned(inner, spec)
    return frozenset(found)


def op_error(op: ir.Operation, spec, operand_types=None, attrs=None) -> Optional[OpError]:
    """The error `op`'s type inference raises for its current operand types (`operand_types`
    and `attrs`, decoded, when the caller has them), which eager raises on values of those
    shapes; None if it has none or an operand is unranked. Specialising a trace to static
    shapes can make an op invalid that its `?` types allowed. Such an op must raise when it
    runs, as eager does there: lowering makes it raise (ember_to_linalg `checks.fail`), and
    rewrites and folds leave it alone until then (passes/rewrite.py, constant_fold.py), and
    it `may_fail`."""
    try:
        if operand_types is None:
            operand_types = [type_from_mlir(v.type) for v in op.operands]
        if any(isinstance(t, TensorType) and t.shape is None for t in operand_types):
            return None
        values = known_operands(spec, op.operands) if spec.uses_values else None
        spec.infer_types(tuple(operand_types), decoded_attrs(op) if attrs is None else attrs,
                         values)
    except OpError as e:
        return e
    except (TypeError, ValueError):  # not types inference knows: the verifier's to say
        return None
    return None
