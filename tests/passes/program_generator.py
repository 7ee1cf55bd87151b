"""Seeded random ember programs for differential tests of the passes.

`generate(seed, dtype)` builds one `func.func @main` over int32 or float32 tensors with
`build_function`/`emit`: elementwise unary and binary ops with broadcasting, constants,
comparisons feeding `ember.select`, cast round trips, reductions, matmul, reshape and
transpose, Philox draws (`ember.philox_random` of a constant state), an `scf.if` on a
computed predicate and an `scf.while` with a counter. The programs
deliberately contain what the optimiser rewrites: constant subexpressions, identities
(`x + 0`, `x * 1`), repeated expressions, dead values and loop-invariant work in loop bodies.

The same seed always gives the same program and inputs, so a failure names its seed:
`generate(seed, dtype).text()` is the IR to look at.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np
from mlir import ir
from mlir.dialects import tensor

from ember.dialects.ember import creation, dtypes, elementwise as ew, philox, reduction, structure
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType, broadcast_shapes

ARG_SHAPES = ((2, 3), (3,), (3, 4), ())
FLOAT_UNARY = (ew.NegOp, ew.AbsOp, ew.ExpOp, ew.TanhOp, ew.SigmoidOp, ew.SinOp, ew.CosOp,
               ew.SquareOp, ew.ReluOp, ew.FloorOp, ew.SqrtOp, ew.Log1pOp, ew.RoundOp)
INT_UNARY = (ew.NegOp, ew.AbsOp, ew.SquareOp, ew.SignOp, ew.ReluOp)
FLOAT_BINARY = (ew.AddOp, ew.SubOp, ew.MulOp, ew.DivOp, ew.MaximumOp, ew.MinimumOp, ew.PowOp)
INT_BINARY = (ew.AddOp, ew.SubOp, ew.MulOp, ew.MaximumOp, ew.MinimumOp)
COMPARE = (ew.LessOp, ew.LessEqualOp, ew.GreaterOp, ew.GreaterEqualOp, ew.EqualOp,
           ew.NotEqualOp)
FLOAT_REDUCE = (reduction.ReduceSumOp, reduction.ReduceMaxOp, reduction.ReduceMinOp,
                reduction.ReduceMeanOp)
INT_REDUCE = (reduction.ReduceSumOp, reduction.ReduceMaxOp, reduction.ReduceMinOp,
              reduction.ReduceProdOp)


@dataclasses.dataclass
class Program:
    """A generated module with one function `@main` and the types of its arguments."""

    module: ir.Module
    arg_types: list
    dtype: dtypes.DType
    seed: int

    def inputs(self, rng: np.random.Generator) -> list[np.ndarray]:
        """Random arguments: small integers, or floats in [-3, 3) with some exact zeros."""
        out = []
        for t in self.arg_types:
            if self.dtype.is_integer:
                out.append(rng.integers(-5, 6, size=t.shape).astype(np.int32))
            else:
                x = rng.uniform(-3, 3, size=t.shape).astype(np.float32)
                out.append(np.where(rng.random(t.shape) < 0.1, np.float32(0), x))
        return out

    def text(self) -> str:
        return str(self.module)


def generate(seed: int, dtype: dtypes.DType, statements: int = 12) -> Program:
    """Builds program number `seed` over `dtype` (int32 or float32) in the current context."""
    module = ir.Module.create()
    arg_types = [TensorType(dtype, s) for s in ARG_SHAPES]
    gen = _Generator(random.Random(seed * 7919 + dtype.bits), dtype)
    build_function(module, "main", arg_types, lambda *args: gen.body(list(args), statements))
    return Program(module, arg_types, dtype, seed)


class _Generator:
    def __init__(self, rng: random.Random, dtype: dtypes.DType):
        self.rng = rng
        self.dtype = dtype
        self.is_int = dtype.is_integer
        self.pool: list[ir.Value] = []

    # -- the program ------------------------------------------------------------------------

    def body(self, args: list[ir.Value], statements: int):
        self.pool = list(args)
        kinds = [self.unary, self.binary, self.binary, self.const_expr, self.identity,
                 self.select, self.cast, self.reduce, self.matmul, self.reshape,
                 self.transpose, self.duplicate, self.philox]
        order = [self.rng.choice(kinds) for _ in range(statements)]
        order.insert(self.rng.randrange(len(order) + 1), self.if_)
        order.insert(self.rng.randrange(len(order) + 1), self.while_)
        results = []
        for kind in order:
            value = kind()
            self.push(value)
            if kind in (self.if_, self.while_):
                results.append(value)
        computed = self.pool[len(args):]
        results += [computed[-1], self.rng.choice(computed)]
        return list({id(v): v for v in results}.values())  # unique, in order

    def statements(self, n: int):
        for _ in range(n):
            self.push(self.rng.choice([self.unary, self.binary, self.const_expr,
                                       self.identity, self.select])())

    def push(self, value):
        if value is not None:
            self.pool.append(value)

    # -- helpers ----------------------------------------------------------------------------

    @staticmethod
    def shape(v: ir.Value) -> tuple:
        return type_from_mlir(v.type).shape

    def pick(self, rank_at_least: int = 0) -> ir.Value:
        fits = [v for v in self.pool if len(self.shape(v)) >= rank_at_least]
        return self.rng.choice(fits) if fits else None

    def partner(self, a: ir.Value, keep_shape: bool = False) -> ir.Value:
        """A value broadcast-compatible with `a` (the result keeps a's shape if asked)."""
        fits = []
        for v in self.pool:
            ok, shape = broadcast_shapes(self.shape(a), self.shape(v))
            if ok and (not keep_shape or shape == self.shape(a)):
                fits.append(v)
        return self.rng.choice(fits) if fits and self.rng.random() < 0.8 else self.const(())

    def scalar(self):
        if self.is_int:
            return self.rng.choice([0, 1, -1, 2, 3, 5, self.rng.randint(-9, 9)])
        return self.rng.choice([0.0, 1.0, -1.0, 0.5, 2.0, round(self.rng.uniform(-3, 3), 3)])

    def const(self, shape: tuple, value=None) -> ir.Value:
        count = int(np.prod(shape)) if shape else 1
        items = [self.scalar() if value is None else value for _ in range(count)]
        array = np.array(items, dtype=self.dtype.np_dtype).reshape(shape)
        return emit(creation.ConstantOp, attrs={"value": array})

    def int_scalar(self, n: int) -> ir.Value:
        return emit(creation.ConstantOp, attrs={"value": np.array(n, np.int32)})

    # -- statements -------------------------------------------------------------------------

    def unary(self):
        return emit(self.rng.choice(INT_UNARY if self.is_int else FLOAT_UNARY), [self.pick()])

    def binary(self):
        a = self.pick()
        if self.is_int and self.rng.random() < 0.2:  # division by a positive constant only
            op = self.rng.choice([ew.FloorDivOp, ew.ModOp])
            return emit(op, [a, self.const((), self.rng.randint(1, 4))])
        b = self.partner(a)
        pair = [a, b] if self.rng.random() < 0.5 else [b, a]
        return emit(self.rng.choice(INT_BINARY if self.is_int else FLOAT_BINARY), pair)

    def const_expr(self):
        """An expression over constants only (folded away), combined with a value."""
        shape = self.rng.choice([(), (3,)])
        folded = emit(self.rng.choice(INT_BINARY if self.is_int else FLOAT_BINARY[:3]),
                      [self.const(shape), self.const(shape)])
        a = self.partner(folded)
        return emit(self.rng.choice([ew.AddOp, ew.MulOp, ew.SubOp]), [a, folded])

    def identity(self):
        """x + 0, x * 1, x - 0, 0 + x, max(x, x): canonicalisation fodder."""
        a = self.pick()
        choice = self.rng.randrange(5)
        if choice == 4:
            return emit(ew.MaximumOp, [a, a])
        zero_or_one = 1 if choice == 1 else 0
        c = self.const(self.rng.choice([(), self.shape(a)]), zero_or_one)
        spec = (ew.AddOp, ew.MulOp, ew.SubOp, ew.AddOp)[choice]
        return emit(spec, [c, a] if choice == 3 else [a, c])

    def select(self):
        a = self.pick()
        cond = emit(self.rng.choice(COMPARE), [a, self.partner(a, keep_shape=True)])
        x, y = self.partner(a, keep_shape=True), self.partner(a, keep_shape=True)
        return emit(ew.SelectOp, [cond, x, y])

    def cast(self):
        a = self.pick()
        if self.is_int:
            via = self.rng.choice([dtypes.int64, dtypes.bool_, dtypes.float64])
        else:
            via = self.rng.choice([dtypes.int32, dtypes.float64, dtypes.bool_])
        there = emit(creation.CastOp, [a], {"dtype": via})
        return emit(creation.CastOp, [there], {"dtype": self.dtype})

    def reduce(self):
        a = self.pick(rank_at_least=1)
        axis = self.rng.randrange(len(self.shape(a)))
        spec = self.rng.choice(INT_REDUCE if self.is_int else FLOAT_REDUCE)
        return emit(spec, [a], {"axes": [axis], "keepdims": self.rng.random() < 0.5})

    def matmul(self):
        a = self.pick(rank_at_least=2)
        if a is None or len(self.shape(a)) != 2:
            return None
        k = self.shape(a)[1]
        rights = [v for v in self.pool if len(self.shape(v)) == 2 and self.shape(v)[0] == k]
        b = self.rng.choice(rights) if rights else self.const((k, 2))
        return emit(structure.MatmulOp, [a, b])

    def reshape(self):
        a = self.pick(rank_at_least=1)
        shape = self.shape(a)
        size = int(np.prod(shape))
        target = self.rng.choice([(size,), (1, size), tuple(reversed(shape))])
        return emit(structure.ReshapeOp, [a], {"shape": list(target)})

    def transpose(self):
        a = self.pick(rank_at_least=2)
        if a is None:
            return None
        perm = list(range(len(self.shape(a))))[::-1]
        return emit(structure.TransposeOp, [a], {"perm": perm})

    def duplicate(self):
        """The same expression twice: CSE merges them."""
        a = self.pick()
        b = self.partner(a)
        spec = self.rng.choice(INT_BINARY if self.is_int else FLOAT_BINARY[:3])
        first = emit(spec, [a, b])
        second = emit(spec, [a, b])
        return emit(ew.AddOp, [first, second])

    def philox(self):
        """Philox numbers of a value's shape from a constant state: raw int32 words, or
        uniform, normal or truncated normal float32."""
        shape = self.shape(self.pick())
        words = [self.rng.randint(-2**63, 2**63 - 1) for _ in range(3)]
        state = emit(creation.ConstantOp, attrs={"value": np.array(words, np.int64)})
        dims = emit(creation.ConstantOp, attrs={"value": np.array(shape, np.int64)})
        dist = "bits" if self.is_int else self.rng.choice(["uniform", "normal",
                                                           "truncated_normal"])
        return emit(philox.PhiloxRandomOp, [state, dims], {"distribution": dist,
                                                           "dtype": self.dtype})

    # -- control flow -----------------------------------------------------------------------

    def predicate(self) -> ir.Value:
        a = self.pick()
        total = emit(reduction.ReduceSumOp, [a], {"axes": list(range(len(self.shape(a)))),
                                                  "keepdims": False})
        flag = emit(self.rng.choice(COMPARE[:4]), [total, self.const(())])
        return tensor.ExtractOp(flag, []).result

    def if_(self):
        cond = self.predicate()
        like = self.pick()
        op = ir.Operation.create("scf.if", results=[like.type], operands=[cond], regions=2)
        for region in op.regions:
            block = ir.Block.create_at_start(region, [])
            with ir.InsertionPoint(block):
                self.scoped(lambda: self.statements(self.rng.randint(1, 3)), like,
                            lambda v: ir.Operation.create("scf.yield", operands=[v]))
        return op.results[0]

    def while_(self):
        acc = self.pick()
        counter_t = ir.Type.parse("tensor<i32>")
        types = [counter_t, acc.type]
        limit = self.int_scalar(self.rng.randint(0, 4))
        one = self.int_scalar(1)
        op = ir.Operation.create("scf.while", results=types, operands=[self.int_scalar(0), acc],
                                 regions=2)
        before = ir.Block.create_at_start(op.regions[0], types)
        with ir.InsertionPoint(before):
            going = emit(ew.LessOp, [before.arguments[0], limit])
            ir.Operation.create("scf.condition", operands=[tensor.ExtractOp(going, []).result,
                                                          *before.arguments])
        after = ir.Block.create_at_start(op.regions[1], types)
        with ir.InsertionPoint(after):
            i, carried = after.arguments
            step = emit(ew.AddOp, [i, one])

            def body():
                self.push(carried)
                if self.is_int:
                    self.push(emit(ew.AddOp, [carried, i]))
                self.statements(self.rng.randint(1, 3))

            def bounded(v):  # keeps floats finite and integers small across iterations
                if self.is_int:
                    v = emit(ew.ModOp, [v, self.const((), 97)])
                else:
                    v = emit(ew.TanhOp, [v])
                ir.Operation.create("scf.yield", operands=[step, v])
            self.scoped(body, carried, bounded)
        return op.results[1]

    def scoped(self, build, like: ir.Value, terminate):
        """Runs `build` in a nested scope; terminates it with its latest value of like's type."""
        saved = list(self.pool)
        build()
        same = [v for v in self.pool[len(saved):] if v.type == like.type]
        if not same:
            spec = self.rng.choice(INT_BINARY if self.is_int else FLOAT_BINARY[:3])
            same = [emit(spec, [like, self.partner(like, keep_shape=True)])]
        terminate(same[-1])
        self.pool = saved
