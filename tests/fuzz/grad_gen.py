"""Random programs that take gradients, for grad_fuzz.py's eager-vs-compiled differential.

`generate(seed)` takes a random forward program and wraps it: the forward becomes
`_forward(...)` and a new `f(...)` (what program_fuzz.py's runner calls, eagerly and through
`em.function`) runs it under an `em.GradientTape` that watches the float inputs, takes the
gradient of a weighted sum of its float outputs (each element weighted differently, see
WEIGHTS) with `unconnected_gradients=ZERO`, and returns the forward outputs followed by the
gradients. Kinds, by `seed % 8`:

- "ops" (0, 1, 2): ops_gen.py's programs over ops_catalogue.py's recipes, static or with
  every dim `?`; when static, sometimes the float inputs are first assigned to module-level
  `em.Variable`s that the forward reads (the gradient is then taken w.r.t. the Variables);
- "core" (3, 4): program_gen.py's programs (em.cond, em.while_loop, Variables assigned and
  read inside, special values, dynamic signatures); the gradient is also taken w.r.t. the
  program's float Variables (watched because they are read);
- "persistent" (5): an ops or core forward under a persistent tape, two gradients: the
  weighted sum's, and that of the outputs themselves with `output_gradients`;
- "second" (6): program_gen's elementwise/reduction/matmul/structure statements under a
  tape inside a tape: the first-order gradient and the gradient of a weighted sum of it;
- "control" (7): Python control flow staged by AutoGraph (`if`/`elif`/`else`, `while`,
  `for` over `range(n)` with a tensor `n`, `break`, `continue`, early `return`) on float
  tensors inside the differentiated region, decided by autograph_gen.py's int expressions
  (and sometimes by a float value), with a trainable Variable read in the loops.

The forward's outputs keep their generator's EXACT marks; gradients are marked "gradient":
compared with the runner's float tolerance plus an absolute 1e-4 of the largest element
(program_fuzz._differs says why). A forward is drawn again (from the generator's next seed) when it
has no float input (every program differentiates something) or hits a documented limit
(`_fits`); array literals are made finite (`_finite`).
"""

from __future__ import annotations

import random
import re

import autograph_gen
import ops_gen
import program_gen
from ops_catalogue import RECIPES

KINDS = ("ops", "ops", "ops", "core", "core", "persistent", "second", "control")
ZERO = "unconnected_gradients=em.UnconnectedGradients.ZERO"

# Per-element weights of output `o` in target `k`: distinct, deterministic, any shape.
WEIGHTS = '''def _weights(o, k):
    n = em.reshape(em.cast(em.range(em.size(o)), o.dtype), em.shape(o))
    return em.cos(n * (0.7 + 0.3 * k) + 0.2 * k) + 0.5


def _floats(values):
    return [o for o in values if o.dtype.is_floating]


def _weighted(values, k):
    total = em.constant(0.0, em.float64)
    for o in _floats(values):
        total = total + em.cast(em.reduce_sum(o * _weights(o, k)), em.float64)
    return total'''


class SecondOrderGen(program_gen.Gen):
    """program_gen's statements whose ops have second derivatives here: elementwise math,
    where, reductions, matmul, reshape/transpose/concat (no control flow, no Variables)."""

    KINDS = ("unary", "binary", "binary", "select", "reduce", "matmul", "structure")

    def statement(self, depth: int = 0):
        getattr(self, self.rng.choice(self.KINDS))()


def _parts(source: str) -> tuple[str, list[str], str]:
    """(the source with `def f(` renamed `def _forward(`, f's parameters, the tail after f)."""
    match = re.search(r"^def f\((.*)\):$", source, re.M)
    params = [p.strip() for p in match.group(1).split(",") if p.strip()]
    return source.replace("\ndef f(", "\ndef _forward(", 1), params, match.group(0)


def _assigned(source: str, name: str):
    return eval(re.search(rf"^{name} = (.*)$", source, re.M).group(1),  # noqa: S307
                {"np": __import__("numpy"), "nan": float("nan"), "inf": float("inf")})


def _float_args(source: str) -> list[str]:
    """The parameters of f whose first call's argument is a float array."""
    import numpy as np
    _, params, _ = _parts(source)
    calls = source[source.index("\nCALLS = [") + 9:]
    calls = eval(calls[:calls.index("\n]\n") + 2],  # noqa: S307 - our own source text
                 {"np": np, "nan": np.nan, "inf": np.inf})
    return [p for p, a in zip(params, calls[0]) if np.asarray(a).dtype.kind == "f"]


def _float_variables(source: str) -> list[str]:
    return re.findall(r"^(v\d+) = em\.Variable\(.*np\.float", source, re.M)


def _set(source: str, name: str, value: str) -> str:
    return re.sub(rf"^{name} = .*$", lambda m: f"{name} = {value}", source, count=1,
                  flags=re.M)


def _wrap(source: str, kind: str, rng: random.Random, variables: bool) -> str:
    """`source` (a program_gen/ops_gen program) with its f differentiated as `kind` says."""
    body, params, _ = _parts(source)
    floats = _float_args(source)
    exact = _assigned(source, "EXACT")
    program_variables = _float_variables(source)
    head, lines = [], []
    forward_args = list(params)
    if variables:  # the float inputs reach the forward through Variables it reads
        for p in floats:
            first = f"CALLS[0][{params.index(p)}]"
            head.append(f"w_{p} = em.Variable(em.zeros_like(em.constant({first})))")
            lines.append(f"    w_{p}.assign({p})")
            forward_args[params.index(p)] = f"w_{p}" if rng.random() < 0.5 \
                else f"w_{p}.read_value()"
        sources = [f"w_{p}" for p in floats]
    else:
        sources = floats + program_variables
    call = f"_forward({', '.join(forward_args)})"
    watch = [p for p in floats if not variables]
    src = f"[{', '.join(sources)}]"
    if kind == "second":
        lines += ["    with em.GradientTape() as outer:",
                  f"        outer.watch([{', '.join(watch)}])",
                  "        with em.GradientTape() as inner:",
                  f"            inner.watch([{', '.join(watch)}])",
                  f"            outs = {call}",
                  "            target = _weighted(outs, 0)",
                  f"        grads = inner.gradient(target, {src}, {ZERO})",
                  "        target2 = _weighted(grads, 1)",
                  f"    grads2 = outer.gradient(target2, {src}, {ZERO})",
                  "    return tuple(outs) + tuple(grads) + tuple(grads2)"]
        count = 2 * len(sources)
    else:
        persistent = kind == "persistent"
        lines += [f"    with em.GradientTape(persistent={persistent}) as tape:",
                  f"        tape.watch([{', '.join(watch)}])",
                  f"        outs = {call}",
                  "        target = _weighted(outs, 0)",
                  f"    grads = tape.gradient(target, {src}, {ZERO})"]
        count = len(sources)
        if persistent:
            lines += ["    ys = _floats(outs)",
                      f"    grads2 = tape.gradient(ys, {src}, output_gradients=[_weights(y, 2)"
                      f" for y in ys], {ZERO})",
                      "    grads = list(grads) + list(grads2)"]
            count *= 2
        lines.append("    return tuple(outs) + tuple(grads)")
    body = _set(body, "EXACT", repr(tuple(exact) + ("gradient",) * count))
    body = body.rstrip("\n") + "\n\n" + WEIGHTS + "\n\n" + "\n".join(head) + "\n\n" \
        + f"def f({', '.join(params)}):\n" + "\n".join(lines) + "\n"
    if variables:  # VARIABLES lists the new Variables too (defined after it: moved last)
        names = re.search(r"^VARIABLES = \[(.*)\]$", source, re.M).group(1)
        names = ", ".join([names] * bool(names) + [f"w_{p}" for p in floats])
        old = _assigned(source, "VARIABLES_EXACT")
        body = re.sub(r"^VARIABLES(_EXACT)? = .*\n", "", body, flags=re.M)
        body += (f"\nVARIABLES = [{names}]\n"
                 f"VARIABLES_EXACT = {tuple(old) + (True,) * len(floats)!r}\n")
    return body


# Gradient rules that need dims known while tracing (tests/autodiff/test_rule_limits.py:
# a clear ValueError when traced with `?` dims, which eager, always static, never raises).
STATIC_ONLY = ("pool", "conv", "rfft")
# With `?` dims the gradient of cumulative_logsumexp takes LLVM minutes to compile (rank 3:
# 50 s; reported): a hang to the pool.
SLOW = ("cumulative_logsumexp", "fft")  # (ifft of rank 4: over 60 s)
SIZED_BY_DATA = {r.name for r in RECIPES if r.sized_by_data}


def _fits(source: str) -> bool:
    """Whether a forward has a float input and avoids what the gradient fuzz found and
    reported but is not fixed: a loop variable that grows (a loop traced under a tape
    stacks them per iteration: OpShapeError while tracing), a loop with shape invariants
    over an empty argument (the backend's invalid IR), a gradient that needs dims known
    while tracing where they are not."""
    if re.search(r"return \(i \+ 1, em\.concat", source):
        return False  # a loop variable that grows: the gradient's stacks need one shape
    if "shape_invariants" in source and "reshape((0" in source.split("\nCALLS = [")[1]:
        return False  # a loop over an empty tensor with `?` dims: compiled fails (reported)
    used = eval(re.search(r"^USED = (.*)$", source, re.M).group(1)) \
        if "\nUSED = " in source else []  # noqa: S307 - our own source text
    # dims unknown while tracing: a `?` signature, or a value sized by its data
    dynamic = "SIGNATURE = None" not in source or any(name in SIZED_BY_DATA for name in used)
    if dynamic and any(k in name for name in used for k in STATIC_ONLY + SLOW):
        return False
    return bool(_float_args(source))


def _finite(source: str) -> str:
    """`source` with the infinities and NaNs in its array literals and its forward's code
    made finite (the largest floats too: they overflow): where eager
    passes no cotangent (a loop that ran no iteration, a branch not taken), compiled code
    passes zeros, and zero times an infinite forward value is NaN (as in TensorFlow's
    graphs), a difference of representation, not of the gradient."""
    special = {"nan": "0.5", "inf": "2.5", "3.4e+38": "3.4", "1e+38": "1.0"}

    def fix(match):
        return re.sub(r"(?<![\w.])(nan|inf|3\.4e\+38|1e\+38)\b(?!\()",
                      lambda m: special[m.group(0)], match.group(0))
    source = re.sub(r"np\.array\(\[.*?\],\s*(dtype=)?np\.", fix, source)
    start, end = source.index("\ndef f("), source.index("\nCALLS = [")
    return source[:start] + fix(re.match(r"(?s).*", source[start:end])) + source[end:]


def _forward_source(kind: str, seed: int, rng: random.Random) -> str:
    if kind == "second":
        return program_gen.generate(seed, SecondOrderGen)
    if kind == "core" or (kind == "persistent" and rng.random() < 0.5):
        return program_gen.generate(seed)
    return ops_gen.generate(seed)


def generate(seed: int) -> str:
    kind = KINDS[seed % len(KINDS)]
    rng = random.Random(f"grad {seed}")
    if kind == "control":
        return control_flow(seed)
    for attempt in range(50):  # the first forward with a float input, see _fits
        sub = seed + attempt * 1_000_003
        source = _finite(_forward_source(kind, sub, rng))
        if _fits(source):
            break
    static = "SIGNATURE = None" in source
    variables = kind == "ops" and static and rng.random() < 0.35
    return f"# grad_gen kind {kind}, forward seed {sub}\n" + _wrap(source, kind, rng, variables)


# -- control flow -------------------------------------------------------------------------

FLOAT_VARS = ("x", "y")
LOOPS = 2  # staged loops per program: their gradients take seconds to compile


class _Flow:
    """A control-flow program over ints a, b, c, d, n (autograph_gen.py's expressions and
    conditions decide the flow) and floats x, y (what is differentiated), reading a
    trainable Variable `v`. Float values stay bounded: each update goes through tanh or
    sin, or adds a small multiple."""

    def __init__(self, seed: int, dynamic: bool):
        self.dynamic = dynamic  # x and y have `?` dims: no `return` (see stmt)
        # (a static v0 would give x static dims that a loop then loses: a ControlFlowError
        # asking for shape_invariants, as TensorFlow raises)
        self.v0 = "em.reduce_mean(v0)" if dynamic else "v0"
        self.ints = autograph_gen._Gen(seed)
        self.r = self.ints.r
        self.loops = 0

    def term(self) -> str:
        r = self.r
        a, b = r.choice(FLOAT_VARS), r.choice(FLOAT_VARS)
        return r.choice([
            a, f"{a} * {b}", f"em.sin({a})", f"em.exp(-em.square({a}))", f"{a} * {self.v0}",
            f"em.maximum({a}, {b})", f"em.sigmoid({a}) * {b}",
            f"em.reduce_sum({a}) * 0.1 + {b}",
            f"{a} * em.cast({r.choice(autograph_gen.VARS)}, {a}.dtype) * 0.01",
            f"em.where({a} > {b}, {a}, {b} * 0.5)"])

    def float_stmt(self, pad: str) -> list[str]:
        r = self.r
        target = r.choice(FLOAT_VARS)
        expr = " + ".join(self.term() for _ in range(r.randint(1, 3)))
        form = r.choice([f"em.tanh({expr})", f"em.sin({expr})",
                         f"{target} + 0.25 * em.tanh({expr})"])
        return [f"{pad}{target} = {form}"]

    def cond(self) -> str:
        if self.r.random() < 0.2:
            bound = self.r.choice(("0.0", "0.5", "-0.5"))
            return f"em.reduce_sum({self.r.choice(FLOAT_VARS)}) > {bound}"
        return self.ints.cond()

    def block(self, depth: int, in_loop: bool, indent: int) -> list[str]:
        lines = []
        for _ in range(self.r.randint(1, 2)):
            lines += self.stmt(depth, in_loop, indent)
        return lines

    def stmt(self, depth: int, in_loop: bool, indent: int) -> list[str]:
        r, pad = self.r, "    " * indent
        choice = r.random()
        if depth >= 2 or choice < 0.3:  # (nested deeper, compiling the gradient takes long)
            return self.float_stmt(pad)
        if choice < 0.4:
            v = r.choice(autograph_gen.VARS)
            return [f"{pad}{v} = ({self.ints.expr()}) % 97"]
        if choice < 0.6:
            lines = [f"{pad}if {self.cond()}:"] + self.block(depth + 1, in_loop, indent + 1)
            if r.random() < 0.3:
                lines += [f"{pad}elif {self.cond()}:"] + self.block(depth + 1, in_loop, indent + 1)
            if r.random() < 0.5:
                lines += [f"{pad}else:"] + self.block(depth + 1, in_loop, indent + 1)
            return lines
        if choice < 0.88 and self.loops >= LOOPS:
            return self.float_stmt(pad)
        if choice < 0.72:
            k = self.loops
            self.loops += 1
            return [f"{pad}k{k} = 0", f"{pad}while k{k} < {r.randint(1, 4)} and ({self.cond()}):",
                    f"{pad}    k{k} += 1"] + self.block(depth + 1, True, indent + 1)
        if choice < 0.88:
            k = self.loops
            self.loops += 1
            bound = "n" if r.random() < 0.7 else str(r.randint(0, 3))
            return [f"{pad}for i{k} in range({bound}):",
                    f"{pad}    {r.choice(FLOAT_VARS)} = {r.choice(FLOAT_VARS)} + "
                    f"em.cast(i{k}, x.dtype) * 0.125"] + self.block(depth + 1, True, indent + 1)
        if in_loop and (choice < 0.95 or self.dynamic):
            return [f"{pad}if {self.cond()}:", f"{pad}    {r.choice(['break', 'continue'])}"]
        if self.dynamic:  # AutoGraph needs static shapes for a value returned from a
            return self.float_stmt(pad)  # staged `if` or loop (reported)
        return [f"{pad}if {self.cond()}:", f"{pad}    return x * 2.0, y"]


def control_flow(seed: int) -> str:
    r = random.Random(f"control {seed}")
    dtype = r.choice(("float32", "float32", "float64"))
    shape = r.choice(((), (3,), (2, 3)))
    dynamic = r.random() < 0.3
    g = _Flow(seed, dynamic and bool(shape))
    body = ["    c = 1", "    d = 2"]
    for _ in range(r.randint(1, 2)):
        body += g.block(0, False, 1)
    body.append("    return x, y")

    def floats():
        return ops_gen._source(ops_gen._array(r, dtype, shape, special=False))
    calls = [[repr(r.randint(0, 96)), repr(r.randint(0, 96)), repr(r.randint(0, 5)), floats(),
              floats()] for _ in range(2)]
    signature = "None"
    if dynamic:
        dims = repr([None] * len(shape))
        signature = ("[em.TensorSpec([], em.int32)] * 3 + "
                     f"[em.TensorSpec({dims}, em.{dtype})] * 2")
    source = "\n".join(
        ["import numpy as np", "import ember as em", "", "nan, inf = np.nan, np.inf", "",
         f"v0 = em.Variable({floats()})", "", "", "def f(a, b, n, x, y):"] + body + [""]
        + ["CALLS = ["] + [f"    [{', '.join(c)}]," for c in calls] + ["]"]
        + ["EXACT = (False, False)", "VARIABLES = [v0]", "VARIABLES_EXACT = (True,)",
           f"SIGNATURE = {signature}", ""])
    return f"# grad_gen kind control, seed {seed}\n" + _wrap(source, "control",
                                                             random.Random(seed), False)
