"""Seeded random Python programs over `em` ops, written as source text a human can rerun.

`generate(seed)` returns the source of a module that defines module-level `em.Variable`s, a
function `f`, the arguments of two calls (`CALLS`), whether each output must agree bit for
bit (`EXACT`; float sums and transcendental functions are compared with a tolerance) and an
optional `SIGNATURE` (an `input_signature` with unknown dims, so dynamic shapes compile too).
The body draws from these families, each a statement kind below:

- elementwise unary/binary math, comparisons, `em.where`, casts, reductions, matmul,
  reshape/transpose/concat, integer floordiv/floormod by values that may be zero (and
  INT_MIN // -1), python scalars mixed in;
- control flow: `em.cond` with branch functions, `em.while_loop` with data-dependent trip
  counts (occasionally a loop variable that grows), both with statements of their own;
- variables: `assign`, `assign_add`, `assign_sub`, `read_value`, also inside branches/loops;
- special values in arguments, variables and constants: NaN, +-inf, -0.0, denormals, the
  largest floats, INT_MIN/INT_MAX, empty tensors;
- out-of-range `em.gather` indices (constant and computed) and `x[i]` indexing;
- huge shapes: `em.fill`/`em.zeros`/`em.broadcast_to` with enormous or overflowing dims.

Values that went through a tolerance-compared op are "approximate"; discontinuous ops
(floor, comparisons, casts to int, argmax, gather indices, floordiv) only take exact values,
so a last-bit difference upstream cannot flip a later result.
"""

from __future__ import annotations

import dataclasses
import random
import re

import numpy as np

F32, F64, I32, BOOL = "float32", "float64", "int32", "bool"
SHAPES = ((), (1,), (3,), (3,), (2, 3), (2, 3), (2, 1), (0,), (0, 3))
FLOAT_SPECIAL = (np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-45, 3.4e38, -3.4e38, 1.0,
                 1e-38)
INT_SPECIAL = (0, 0, -1, 1, -2**31, 2**31 - 1, 7, -7)
EXACT_UNARY = ("negative", "abs", "floor", "ceil", "round", "square", "relu", "sign", "sqrt")
APPROX_UNARY = ("exp", "log", "tanh", "sigmoid", "sin", "cos", "expm1", "log1p", "rsqrt")
INT_UNARY = ("negative", "abs", "square", "sign", "relu")
EXACT_BINARY = ("add", "subtract", "multiply", "divide", "maximum", "minimum", "floordiv",
                "floormod")
INT_BINARY = ("add", "subtract", "multiply", "maximum", "minimum", "floordiv", "floormod")
COMPARE = ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")
DISCONTINUOUS = ("floor", "ceil", "round", "sign", "floordiv", "floormod")
HUGE = (2**31, 2**33, 2**40, 2**62, 2**63 - 1, -1, 0)


@dataclasses.dataclass
class Val:
    """A Python name in the generated code with its dtype, static shape and exactness."""

    name: str
    dtype: str
    shape: tuple
    exact: bool = True
    line: int = -1  # where it is defined in Gen.lines


def _broadcast(a: tuple, b: tuple):
    try:
        return tuple(np.broadcast_shapes(a, b))
    except ValueError:
        return None


def _literal(x, dtype: str) -> str:
    if dtype == BOOL:
        return repr(bool(x))
    if dtype == I32:
        return repr(int(x))
    x = float(x)
    if np.isnan(x):
        return "nan"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def _is_zero(source: str) -> bool:
    """Whether operand source `source` (a literal or an `em.constant`) is all zeros."""
    if source.startswith("em.constant("):
        value = eval(source[len("em.constant("):-1],  # noqa: S307 - our own source text
                     {"np": np, "nan": np.nan, "inf": np.inf})
        return bool(np.all(value == 0))
    return source == "0"


def array_source(rng: random.Random, dtype: str, shape: tuple, special: float = 0.2) -> str:
    """`np.array(...)` source with random values, some of them special."""
    count = int(np.prod(shape)) if shape else 1
    items = []
    for _ in range(count):
        if dtype == BOOL:
            items.append(rng.random() < 0.5)
        elif dtype == I32:
            items.append(rng.choice(INT_SPECIAL) if rng.random() < special
                         else rng.randint(-9, 9))
        else:
            items.append(rng.choice(FLOAT_SPECIAL) if rng.random() < special
                         else round(rng.uniform(-4, 4), 2))
    flat = "[" + ", ".join(_literal(x, dtype) for x in items) + "]"
    np_dtype = "np.bool_" if dtype == BOOL else f"np.{dtype}"
    return f"np.array({flat}, {np_dtype}).reshape({shape!r})"


class Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.lines: list[str] = []
        self.indent = 1
        self.count = 0
        self.scopes: list[list[Val]] = []
        self.variables: list[Val] = []
        self.dynamic = False  # whether SIGNATURE has unknown dims
        self.unknown_rows: set[str] = set()  # arguments whose dim 0 SIGNATURE leaves None

    # -- bookkeeping ------------------------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def fresh(self, prefix: str = "t") -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def values(self) -> list[Val]:
        return [v for scope in self.scopes for v in scope]

    def define(self, expr: str, dtype: str, shape: tuple, exact: bool) -> Val:
        v = Val(self.fresh(), dtype, tuple(shape), exact, len(self.lines))
        self.emit(f"{v.name} = {expr}")
        self.scopes[-1].append(v)
        return v

    def pick(self, dtypes=(F32, I32), exact=False, rank=None) -> Val | None:
        fits = [v for v in self.values() if v.dtype in dtypes and (v.exact or not exact)
                and (rank is None or len(v.shape) >= rank)]
        return self.rng.choice(fits) if fits else None

    def fair_failure(self, a: Val | None = None, axis: int = 0) -> bool:
        """Whether an op the trace knows to be invalid may go here. It fails while tracing,
        before anything runs (as in tf.function); eagerly it fails when reached: maybe after
        another op failed, or never (a branch not taken). Fair as the first statement, or
        when `a`'s dim `axis` is one the SIGNATURE leaves unknown (compiled code then checks
        it when the op runs, as eager does)."""
        return not self.lines or (a is not None and axis == 0 and a.name in self.unknown_rows)

    def unused(self, scope: list[Val]) -> list[Val]:
        """The values of `scope` no later line reads: dead code, which tf.function prunes
        (only ops the outputs or stateful ops depend on run: the tf.function guide), so an
        error in it would surface eagerly only. The generator makes each reach an output."""
        return [v for v in scope if v.line >= 0 and not re.search(
            rf"\b{v.name}\b", "\n".join(self.lines[v.line + 1:]))]

    def partner(self, a: Val, exact=False, same_shape=False) -> str:
        """An operand for `a`: a compatible value, a python scalar or a constant."""
        fits = [v for v in self.values() if v.dtype == a.dtype and (v.exact or not exact)
                and (v.shape == a.shape if same_shape else _broadcast(v.shape, a.shape))]
        roll = self.rng.random()
        if fits and roll < 0.7:
            return self.rng.choice(fits).name
        if roll < 0.85 and a.dtype != BOOL:
            return _literal(self.rng.choice(FLOAT_SPECIAL if a.dtype in (F32, F64)
                                            else INT_SPECIAL), a.dtype)
        shape = a.shape if same_shape or self.rng.random() < 0.5 else ()
        return f"em.constant({array_source(self.rng, a.dtype, shape)})"

    def partner_val(self, a: Val, name: str) -> Val:
        found = [v for v in self.values() if v.name == name]
        return found[0] if found else Val(name, a.dtype, a.shape if "reshape" in name else ())

    # -- statements -------------------------------------------------------------------------

    def unary(self):
        a = self.pick()
        if a is None:
            return
        if a.dtype == I32:
            op = self.rng.choice(INT_UNARY)
        else:
            op = self.rng.choice(EXACT_UNARY + APPROX_UNARY)
            if op in DISCONTINUOUS and not a.exact:
                op = "negative"
        self.define(f"em.{op}({a.name})", a.dtype, a.shape, a.exact and op not in APPROX_UNARY)

    def binary(self):
        a = self.pick()
        if a is None:
            return
        ops = INT_BINARY if a.dtype == I32 else EXACT_BINARY + ("pow",)
        op = self.rng.choice(ops)
        discontinuous = op in DISCONTINUOUS
        if discontinuous and not a.exact:
            op, discontinuous = "add", False
        b = self.partner(a, exact=discontinuous)
        if a.dtype == I32 and ((op == "multiply" and _is_zero(b)) or
                               (op == "subtract" and b == a.name)):
            # ember-canonicalize folds integer x * 0 and x - x to 0, and tf.function runs
            # only what the outputs need: an error in computing x would surface eagerly only
            op = "add"
        bv = self.partner_val(a, b)
        shape = _broadcast(a.shape, bv.shape) or a.shape
        args = f"{a.name}, {b}" if self.rng.random() < 0.8 else f"{b}, {a.name}"
        if b[0].isalpha() and not b.startswith("em.") and self.rng.random() < 0.3 \
                and op in ("add", "subtract", "multiply"):  # operator syntax
            sym = {"add": "+", "subtract": "-", "multiply": "*"}[op]
            expr = f"{a.name} {sym} {b}"
        else:
            expr = f"em.{op}({args})"
        self.define(expr, a.dtype, shape, a.exact and bv.exact and op != "pow")

    def select(self):
        a = self.pick(exact=True)
        if a is None:
            return
        cond = self.define(f"em.{self.rng.choice(COMPARE)}({a.name}, "
                           f"{self.partner(a, exact=True, same_shape=True)})",
                           BOOL, a.shape, True)
        x = self.pick(dtypes=(a.dtype,))
        fits = [v for v in self.values() if v.dtype == a.dtype and v.shape == a.shape]
        y = self.rng.choice(fits)
        if x is None or x.shape != a.shape:
            x = a
        self.define(f"em.where({cond.name}, {x.name}, {y.name})", a.dtype, a.shape,
                    x.exact and y.exact)

    def cast(self):
        a = self.pick(exact=self.rng.random() < 0.5)
        if a is None:
            return
        to = self.rng.choice([t for t in (F32, F64, I32, BOOL) if t != a.dtype])
        if to in (I32, BOOL) and not a.exact:
            return
        v = self.define(f"em.cast({a.name}, em.{to if to != BOOL else 'bool'})", to, a.shape,
                        a.exact)
        if to == BOOL or (to == F64 and self.rng.random() < 0.5):
            back = a.dtype
            self.define(f"em.cast({v.name}, em.{back})", back, a.shape, v.exact)

    def reduce(self):
        a = self.pick(rank=1)
        if a is None:
            return
        op = self.rng.choice(("reduce_sum", "reduce_max", "reduce_min", "reduce_mean",
                              "reduce_prod", "argmax", "argmin"))
        if op.startswith("arg"):
            axis = self.rng.randrange(len(a.shape))
            empty = a.shape[axis] == 0  # an error the trace may know: see fair_failure
            if not a.exact or (empty and not self.fair_failure(a, axis)):
                return
            shape = a.shape[:axis] + a.shape[axis + 1:]
            self.define(f"em.{op}({a.name}, axis={axis})", "int64", shape, True)
            return
        axis = self.rng.choice([None, self.rng.randrange(len(a.shape))])
        keep = self.rng.random() < 0.3
        if axis is None:
            shape = tuple(1 for _ in a.shape) if keep else ()
        else:
            shape = a.shape[:axis] + ((1,) if keep else ()) + a.shape[axis + 1:]
        exact = a.exact and (a.dtype == I32 or op in ("reduce_max", "reduce_min"))
        self.define(f"em.{op}({a.name}, axis={axis}, keepdims={keep})", a.dtype, shape, exact)

    def matmul(self):
        a = self.pick(dtypes=(F32,), rank=2)
        if a is None or len(a.shape) != 2:
            return
        # tf.matmul fixes no summation order, nor whether products are fused (numpy's BLAS
        # uses FMA): where a finite product or sum overflows, one order gives inf and
        # another inf - inf = NaN. Finite magnitudes above 1e15 become +-inf first, so no
        # sum of 3 products overflows, while inf and NaN inputs still take part.
        b = self.define(f"em.where(em.abs({a.name}) < 1e15, {a.name}, "
                        f"em.sign({a.name}) * inf)", F32, a.shape, a.exact)
        self.define(f"em.matmul({b.name}, em.transpose({b.name}))", F32,
                    (a.shape[0], a.shape[0]), False)

    def structure(self):
        a = self.pick(rank=1)
        if a is None:
            return
        size = int(np.prod(a.shape))
        kind = self.rng.randrange(3)
        if kind == 0:
            self.define(f"em.reshape({a.name}, [{size}])", a.dtype, (size,), a.exact)
        elif kind == 1 and len(a.shape) == 2:
            self.define(f"em.transpose({a.name})", a.dtype, a.shape[::-1], a.exact)
        else:
            shape = (2 * a.shape[0],) + a.shape[1:]
            self.define(f"em.concat([{a.name}, {a.name}], axis=0)", a.dtype, shape, a.exact)

    def gather(self):
        a = self.pick(rank=1, exact=self.rng.random() < 0.5)
        if a is None:
            return
        axis = self.rng.randrange(len(a.shape))
        size = a.shape[axis]
        kind = self.rng.randrange(4)
        if kind == 0:  # constant indices, some out of range
            bad = (size, -1, 2**31 - 1) if self.rng.random() < 0.3 else (0,)
            idx = [self.rng.choice((0, size - 1, self.rng.randrange(max(size, 1))) + bad)
                   for _ in range(self.rng.randint(1, 3))]
            index, ishape = f"em.constant({idx!r})", (len(idx),)
        elif kind == 1:  # computed indices
            ints = self.pick(dtypes=(I32,), exact=True)
            if ints is None:
                return
            index, ishape = f"em.floormod({ints.name}, {max(size, 1) + 1})", ints.shape
        elif kind == 2:
            ints = self.pick(dtypes=(I32,), exact=True)
            if ints is None:
                return
            index, ishape = ints.name, ints.shape
        else:  # python indexing, possibly out of range
            size = a.shape[0]
            fair = self.fair_failure(a)  # for an index the trace may know is wrong
            if size == 0 and not fair:
                return
            i = self.rng.choice((0, -1, size, size - 1, -size - 1) if fair
                                else (0, -1, size - 1))
            self.define(f"{a.name}[{i}]", a.dtype, a.shape[1:], a.exact)
            return
        shape = a.shape[:axis] + tuple(ishape) + a.shape[axis + 1:]
        self.define(f"em.gather({a.name}, {index}, axis={axis})", a.dtype, shape, a.exact)

    def huge(self):
        dims = [self.rng.choice(HUGE) for _ in range(self.rng.choice((1, 1, 2)))]
        if (min(dims) < 0 or np.prod([float(d) for d in dims]) > 2.0 ** 40) \
                and not self.fair_failure():  # may be invalid while tracing: fair_failure
            dims = [d for d in dims if 0 <= d <= 2**40][:1] or [2**33]
        kind, dtype = self.rng.randrange(3), F32
        if kind == 0:
            inner = f"em.fill({dims!r}, {_literal(self.rng.choice((1.0, 0.5, -0.0)), F32)})"
        elif kind == 1:
            dtype = self.rng.choice((F32, I32))
            inner = f"em.zeros({dims!r}, em.{dtype})"
        else:
            a = self.pick(exact=True) or Val("1.0", F32, ())
            dtype = a.dtype
            inner = f"em.broadcast_to({a.name}, {dims!r} + {list(a.shape)!r})"
        self.define(f"em.reduce_max({inner})", dtype, (), True)

    def special_constant(self):
        dtype = self.rng.choice((F32, F32, I32, F64))
        shape = self.rng.choice(SHAPES)
        self.define(f"em.constant({array_source(self.rng, dtype, shape, special=0.7)})",
                    dtype, shape, True)

    def variable_op(self):
        if not self.variables:
            return
        var = self.rng.choice(self.variables)
        kind = self.rng.randrange(4)
        if kind == 0:
            self.define(f"{var.name}.read_value()", var.dtype, var.shape, var.exact)
            return
        # Only exact values: a read earlier in the body sees this value on the next call,
        # and that read was already generated as exact.
        fits = [v for v in self.values() if v.dtype == var.dtype and v.shape == var.shape
                and v.exact]
        value = self.rng.choice(fits) if fits else None
        expr = value.name if value else f"{var.name}.read_value() + {_literal(1, var.dtype)}"
        method = ("assign", "assign_add", "assign_sub")[kind - 1]
        self.emit(f"{var.name}.{method}({expr})")
        var.exact = var.exact and (value is None or value.exact)

    def predicate(self) -> str:
        a = self.pick(exact=True)
        if a is None:
            return "em.constant(True)"
        kind = self.rng.randrange(3)
        if kind == 0:
            return f"em.reduce_any(em.is_nan(em.cast({a.name}, em.float32)))"
        return (f"em.reduce_sum(em.cast({a.name}, em.float32)) "
                f"{self.rng.choice(('>', '<', '>='))} {_literal(self.rng.randint(-3, 3), F32)}")

    def cond(self):
        like = self.pick()
        if like is None:
            return
        pred = self.predicate()
        names, exact = [], like.exact
        for branch in ("then", "else"):
            name = self.fresh(f"{branch}_")
            self.emit(f"def {name}():")
            result = self.nested(like, self.rng.randint(0, 3))
            exact = exact and result.exact
            names.append(name)
        self.define(f"em.cond({pred}, {names[0]}, {names[1]})", like.dtype, like.shape, exact)

    def while_(self):
        x = self.pick()
        if x is None:
            return
        limit = self.rng.choice(("0", "1", "3", "limit"))
        if limit == "limit":
            base = self.pick(dtypes=(I32,), exact=True)
            limit = f"em.floormod(em.reduce_sum({base.name}), 4)" if base else "2"
        c, b = self.fresh("cond_"), self.fresh("body_")
        self.emit(f"def {c}(i, x):")
        self.emit(f"    return i < {limit}")
        self.emit(f"def {b}(i, x):")
        # After one iteration x may be approximate: discontinuous ops must not see it.
        loop_var = Val("x", x.dtype, x.shape, x.exact and x.dtype not in (F32, F64))
        grow = self.rng.random() < 0.08 and x.shape
        result = self.nested(loop_var, self.rng.randint(0, 3), counter=True,
                             grow=bool(grow))
        extra = ", maximum_iterations=2" if self.rng.random() < 0.2 else ""
        if grow or self.dynamic:
            # Traced, a loop variable keeps its shape unless its invariant lets it change
            # (tf.while_loop's shape_invariants); eager does not check. Under a SIGNATURE
            # with unknown dims a value the generator sees as (2, 3) may trace as (None, 3)
            # or (None, None): the body's result must fit the variable whatever it traced as.
            dims = ["None"] * len(x.shape) if self.dynamic else \
                ["None"] + [str(d) for d in x.shape[1:]]
            extra += (f", shape_invariants=(em.TensorShape([]), "
                      f"em.TensorShape([{', '.join(dims)}]))")
        shape = x.shape if not grow else (None,) + x.shape[1:]
        out = self.define(f"em.while_loop({c}, {b}, (em.constant(0), {x.name}){extra})[1]",
                          x.dtype, shape, x.exact and result.exact)
        if grow:  # its length is unknown here; only reduce it
            self.scopes[-1].remove(out)
            self.define(f"em.reduce_max({out.name})", x.dtype, (), out.exact)

    def nested(self, like: Val, statements: int, counter=False, grow=False) -> Val:
        """A function body returning a value of like's type (and i + 1 for loop bodies)."""
        self.indent += 1
        self.scopes.append([like] if counter else [])
        for _ in range(statements):
            self.statement(depth=1)
        same = [v for v in self.scopes[-1] if v.dtype == like.dtype and v.shape == like.shape]
        result = same[-1] if same else like
        if not same and not counter:
            result = self.define(f"{like.name} + {_literal(1, like.dtype)}", like.dtype,
                                 like.shape, like.exact)
        name = result.name
        dead = [v for v in self.unused(self.scopes[-1]) if v is not result]
        if dead:
            name = f"use({name}, {', '.join(v.name for v in dead)})"
        if grow:
            name = f"em.concat([{name}, {name}], axis=0)"
        elif counter and like.dtype in (F32, F64) and self.rng.random() < 0.5:
            name, result = f"em.tanh({name})", Val(name, like.dtype, like.shape, False)
        self.emit(f"return (i + 1, {name})" if counter else f"return {name}")
        self.scopes.pop()
        self.indent -= 1
        return result

    def nn(self):
        """An em.nn window op on a rank-2 float value seen as one HxWx1 image (conv1d: H
        sequences of W), its result flattened back to rank 2."""
        a = self.pick(dtypes=(F32,), rank=1)
        if a is not None and len(a.shape) == 1:  # a row: one 1xW image
            a = self.define(f"em.reshape({a.name}, [1, {a.shape[0]}])", F32, (1,) + a.shape,
                            a.exact)
        if a is None or len(a.shape) != 2:
            return
        (h, w), rng = a.shape, self.rng
        k, s, pad = rng.choice((1, 2, 3)), rng.choice((1, 2)), rng.choice(("SAME", "VALID"))

        def out(size, window=k):
            return -(-size // s) if pad == "SAME" else max((size - window) // s + 1, 0)
        # as matmul: finite magnitudes above 1e15 become +-inf, so no sum order overflows
        b = self.define(f"em.where(em.abs({a.name}) < 1e15, {a.name}, em.sign({a.name}) * inf)",
                        F32, a.shape, a.exact).name
        image, kind = f"em.reshape({b}, [1, {h}, {w}, 1])", rng.randrange(5)
        if kind == 0:
            expr, shape = f"em.nn.max_pool({image}, {k}, {s}, {pad!r})", (out(h), out(w))
        elif kind == 1:
            expr = f"em.nn.avg_pool2d({image}, [1, {k}], {s}, {pad!r})"
            shape = (out(h, 1), out(w))
        elif kind == 2:
            f = array_source(rng, F32, (k, k, 1, 2), special=0.0)
            expr = f"em.nn.depthwise_conv2d({image}, {f}, [1, {s}, {s}, 1], {pad!r})"
            shape = (out(h), 2 * out(w))
        elif kind == 3:
            f = array_source(rng, F32, (k, 1, 1), special=0.0)
            expr = f"em.nn.conv1d(em.reshape({b}, [{h}, {w}, 1]), {f}, {s}, {pad!r})"
            shape = (h, out(w))
        else:  # the transpose of a conv2d whose output is this image
            f = array_source(rng, F32, (k, k, 1, 1), special=0.0)
            back = [h * s, w * s] if pad == "SAME" else [max((d - 1) * s + k, 0) if d else 0
                                                         for d in (h, w)]
            expr = f"em.nn.conv2d_transpose({image}, {f}, [1, {back[0]}, {back[1]}, 1], {s}, " \
                   f"{pad!r})"
            shape = tuple(back)
        self.define(f"em.reshape({expr}, {list(shape)!r})", F32, shape, False)

    KINDS = ("unary", "binary", "binary", "binary", "select", "cast", "reduce", "matmul",
             "structure", "gather", "special_constant", "variable_op", "variable_op")

    def statement(self, depth: int = 0):
        kinds = self.KINDS + (("cond", "while_") if depth == 0 else ())
        getattr(self, self.rng.choice(kinds))()


# A nested function returns one value: the others it computes reach it through `use` (see
# Gen.unused); counting NaNs reads every element and changes no finite result.
USE = '''def use(x, *values):
    n = em.constant(0)
    for v in values:
        n = n + em.reduce_sum(em.cast(em.is_nan(em.cast(v, em.float32)), em.int32))
    return x + em.cast(n, x.dtype)'''


def generate(seed: int, gen_class=None) -> str:
    """The source of program `seed` (see the module docstring for what it defines); a
    `gen_class` (a Gen subclass) may draw from other statement kinds."""
    gen = (gen_class or Gen)(seed)
    rng = gen.rng
    args = [Val(f"a{i}", rng.choice((F32, F32, I32)), rng.choice(SHAPES))
            for i in range(rng.randint(1, 4))]
    head = ["import numpy as np", "import ember as em", "", "nan, inf = np.nan, np.inf", "",
            USE, ""]
    for i in range(rng.choice((0, 1, 1, 2))):
        var = Val(f"v{i}", rng.choice((F32, I32)), rng.choice(SHAPES[:5]))
        head.append(f"{var.name} = em.Variable({array_source(rng, var.dtype, var.shape)})")
        gen.variables.append(var)
    gen.scopes.append(list(args))
    # drawn from its own stream, before the body (whose loops depend on it)
    signature, sig_rng = "None", random.Random(f"signature {seed}")
    if sig_rng.random() < 0.25:
        dims = [[d if sig_rng.random() < 0.5 else None for d in a.shape] for a in args]
        signature = "[" + ", ".join(f"em.TensorSpec({d!r}, em.{a.dtype})"
                                    for d, a in zip(dims, args)) + "]"
        gen.dynamic = "None" in signature
        gen.unknown_rows = {a.name for d, a in zip(dims, args) if d and d[0] is None}
    statements = rng.randint(3, 10)
    huge_at = rng.randrange(statements) if rng.random() < 0.12 else -1  # ends the program
    for n in range(statements):
        gen.huge() if n == huge_at else gen.statement()
    computed = [v for v in gen.scopes[0] if v not in args] or args
    outs = list({id(v): v for v in [computed[-1]] + rng.sample(computed, min(2, len(
        computed))) + gen.unused(computed)}.values())
    gen.emit(f"return ({', '.join(v.name for v in outs)},)")
    calls = [[array_source(rng, a.dtype, a.shape) for a in args] for _ in range(2)]
    return "\n".join(
        head + ["", f"def f({', '.join(a.name for a in args)}):"] + gen.lines + [""]
        + ["CALLS = ["] + [f"    [{', '.join(c)}]," for c in calls] + ["]"]
        + [f"EXACT = {tuple(v.exact for v in outs)!r}",
           f"VARIABLES = [{', '.join(v.name for v in gen.variables)}]",
           f"VARIABLES_EXACT = {tuple(v.exact for v in gen.variables)!r}",
           f"SIGNATURE = {signature}", ""])
