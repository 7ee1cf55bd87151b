"""Random programs over the ops of issue 13 (ops_catalogue.py), for ops_fuzz.py.

`generate(seed)` writes `f(a0, ...)`: 3 to 8 statements, each one call of a recipe on an
argument or an earlier result (the first tries recipe number `seed` modulo their count), then a return of the last result and up to two others. Every
call is run eagerly on the first argument set while generating and kept only if it succeeds,
so the programs are valid for their inputs and the recipes need not know every op's rules.
40% of the programs are traced with every dim `?`, the others with their static shapes;
recipes not marked `dynamic` only take values whose shape is known while tracing (not one
computed from a `?` dim or by an op whose result size depends on the data). The source defines what program_fuzz.py's runner reads (`CALLS`,
`EXACT`, `SIGNATURE`, `VARIABLES`, `VARIABLES_EXACT`) and `USED`, the recipes it calls.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

import ember as em
from ops_catalogue import RECIPES

DTYPES = ("float32", "float32", "float64", "int32", "int64")
SHAPES = ((), (4,), (3, 4), (4, 4), (2, 3, 4), (1, 5), (0, 3), (3, 0, 2), (1, 4, 5, 2),
          (2, 3, 3, 1))
OPERAND_LIMIT = 256  # elements: a call on larger values (meshgrid squares sizes) is not made


@dataclasses.dataclass(frozen=True)
class Val:
    name: str
    dtype: str
    shape: tuple
    static: bool = True  # its shape is known while tracing (else some dims are `?`)

    @property
    def kind(self) -> str:
        return np.dtype(self.dtype).kind


class Pick:
    """What a recipe may draw: `rng`, `flag()`, and `like(x)`, a value of x's type."""

    def __init__(self, rng: random.Random, values: list[Val]):
        self.rng, self.values, self.picked = rng, values, []

    def flag(self) -> bool:
        return self.rng.random() < 0.5

    def like(self, x: Val) -> Val:
        out = self.rng.choice([v for v in self.values if v.dtype == x.dtype and
                               v.shape == x.shape and v.static >= x.static])
        self.picked.append(out)
        return out


def _array(rng: random.Random, dtype: str, shape: tuple, special: bool) -> np.ndarray:
    n = int(np.prod(shape))
    if np.dtype(dtype).kind == "f":
        data = [round(rng.uniform(-3, 3), 2) for _ in range(n)]
        if special and n:
            for _ in range(rng.randint(1, 2)):
                data[rng.randrange(n)] = rng.choice((np.nan, np.inf, -np.inf, -0.0, 0.0))
    else:
        data = [rng.randint(-5, 5) for _ in range(n)]
    return np.array(data, dtype=dtype).reshape(shape)


def _source(a: np.ndarray) -> str:
    return f"np.array({a.tolist()!r}, dtype=np.{a.dtype}).reshape({a.shape!r})"


def _try(expr: str, namespace: dict):
    try:
        with np.errstate(all="ignore"):
            out = eval(expr, namespace)  # noqa: S307 - our own generated call
    except Exception:  # noqa: BLE001 - an invalid call for these operands: draw another
        return None
    return out if isinstance(out, em.Tensor) else None


def generate(seed: int) -> str:
    rng = random.Random(seed)
    featured = RECIPES[seed % len(RECIPES)]  # tried first, so every recipe gets its turn
    dynamic = rng.random() < 0.4 and featured.dynamic
    special = rng.random() < 0.15
    args = [Val(f"a{i}", rng.choice(DTYPES), rng.choice(SHAPES), static=not dynamic)
            for i in range(rng.randint(1, 3))]
    args[0] = Val("a0", rng.choice([d for d in DTYPES if np.dtype(d).kind in featured.kinds]),
                  rng.choice([s for s in SHAPES if len(s) >= featured.min_rank]), not dynamic)
    calls = [[_array(rng, a.dtype, a.shape, special) for a in args] for _ in range(2)]
    namespace = {"em": em, "np": np, "inf": np.inf, "nan": np.nan}
    namespace.update({a.name: em.constant(v) for a, v in zip(args, calls[0])})
    values, lines, used = list(args), [], []
    for n in range(rng.randint(3, 8)):
        for attempt in range(30):
            recipe = featured if n == 0 and attempt < 10 else rng.choice(RECIPES)
            fits = [v for v in values if v.kind in recipe.kinds and np.prod(v.shape) <= OPERAND_LIMIT
                    and len(v.shape) >= recipe.min_rank and (v.static or recipe.dynamic)]
            if not fits:
                continue
            x, pick = rng.choice(fits), Pick(rng, values)
            expr = recipe.write(pick, x)
            out = _try(expr, namespace)
            if out is None:
                continue
            name = f"t{n}"
            namespace[name] = out
            static = x.static and all(v.static for v in pick.picked) and not recipe.sized_by_data
            values.append(Val(name, out.dtype.name, tuple(out.numpy().shape), static))
            lines.append(f"    {name} = {expr}")
            used.append(recipe.name)
            break
    computed = values[len(args):] or args
    outs = list(dict.fromkeys([computed[-1]] + rng.sample(computed, min(2, len(computed)))))
    lines.append(f"    return ({', '.join(v.name for v in outs)},)")
    if dynamic:
        signature = "[" + ", ".join(f"em.TensorSpec({[None] * len(a.shape)!r}, em.{a.dtype})"
                                    for a in args) + "]"
    else:
        signature = "None"
    return "\n".join(
        ["import numpy as np", "import ember as em", "", "nan, inf = np.nan, np.inf", "",
         f"def f({', '.join(a.name for a in args)}):"] + lines + [""]
        + ["CALLS = ["] + [f"    [{', '.join(_source(a) for a in c)}]," for c in calls] + ["]"]
        + [f"EXACT = {(False,) * len(outs)!r}", "VARIABLES = []", "VARIABLES_EXACT = ()",
           f"SIGNATURE = {signature}", f"USED = {used!r}", ""])
