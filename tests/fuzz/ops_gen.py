"""Random programs over the ops of issue 13 (ops_catalogue.py), for ops_fuzz.py.

`generate(seed)` writes `f(a0, ...)`: 3 to 8 statements, each one call of a recipe on an
argument or an earlier result, then a return of the last result and up to two others. Every
call is run eagerly on the first argument set while generating and kept only if it succeeds,
so the programs are valid for their inputs and the recipes need not know every op's rules.
40% of the programs are traced with every dim `?` (only recipes marked `dynamic`); the others
with their static shapes. The source defines what program_fuzz.py's runner reads (`CALLS`,
`EXACT`, `SIGNATURE`, `VARIABLES`, `VARIABLES_EXACT`) and `USED`, the recipes it calls.
"""

from __future__ import annotations

import dataclasses
import random

import numpy as np

import ember as em
from ops_catalogue import RECIPES

DTYPES = ("float32", "float32", "float64", "int32", "int64")
SHAPES = ((), (4,), (3, 4), (4, 4), (2, 3, 4), (1, 5), (0, 3), (3, 0, 2))


@dataclasses.dataclass(frozen=True)
class Val:
    name: str
    dtype: str
    shape: tuple

    @property
    def kind(self) -> str:
        return np.dtype(self.dtype).kind


class Pick:
    """What a recipe may draw: `rng`, `flag()`, and `like(x)`, a value of x's type."""

    def __init__(self, rng: random.Random, values: list[Val]):
        self.rng, self.values = rng, values

    def flag(self) -> bool:
        return self.rng.random() < 0.5

    def like(self, x: Val) -> Val:
        return self.rng.choice([v for v in self.values
                                if v.dtype == x.dtype and v.shape == x.shape])


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
    dynamic = rng.random() < 0.4
    special = rng.random() < 0.15
    args = [Val(f"a{i}", rng.choice(DTYPES), rng.choice(SHAPES))
            for i in range(rng.randint(1, 3))]
    calls = [[_array(rng, a.dtype, a.shape, special) for a in args] for _ in range(2)]
    namespace = {"em": em, "np": np, "inf": np.inf, "nan": np.nan}
    namespace.update({a.name: em.constant(v) for a, v in zip(args, calls[0])})
    values, lines, used = list(args), [], []
    recipes = [r for r in RECIPES if r.dynamic or not dynamic]
    for n in range(rng.randint(3, 8)):
        for _ in range(30):
            recipe = rng.choice(recipes)
            fits = [v for v in values if v.kind in recipe.kinds and len(v.shape) >= recipe.min_rank]
            if not fits:
                continue
            expr = recipe.write(Pick(rng, values), rng.choice(fits))
            out = _try(expr, namespace)
            if out is None:
                continue
            name = f"t{n}"
            namespace[name] = out
            values.append(Val(name, out.dtype.name, tuple(out.numpy().shape)))
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
