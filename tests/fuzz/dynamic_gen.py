"""Seeded random DYNAMIC programs, as users write them: shapes unknown until run time.

`generate(seed)` returns the source of a module in program_gen.py's format (`f`, `SIGNATURE`,
`CALLS`, `EXACT`, `VARIABLES`, `VARIABLES_EXACT`). Its argument `x` has an unknown row
count (`TensorSpec([None, C])`, sometimes `TensorSpec(None)`: unknown rank) and `i`, `j`,
`n` are traced int32 scalars. The two calls differ in row count (0 to 5 rows) and draw the
scalars from a range that reaches past the rows, so indices go out of range, slices clamp,
broadcasts meet run-time sizes of 1 and shapes mismatch. Each statement rewrites the value
`v` (rows unknown, C columns) with one of the FAMILIES:

- traced indices: `v[i]`, `v[i:i + 2]`, `v[:, j:j + 1]`, `v[i, j]`;
- shape arithmetic: reshape to `[em.shape(v)[0], -1]` or `[n, -1]`, `em.zeros`/`em.ones`
  of `[em.shape(v)[0], C]`, `em.broadcast_to`, `em.range` of the row count, `em.one_hot`;
- run-time broadcasting and mismatches: `v * v[:1]`, `v + v[:n]`, matmuls;
- loop states that change shape: `em.while_loop` with `shape_invariants` that grows `v`;
- gathers of traced ranges, concats with traced slices.
"""

from __future__ import annotations

import random

import numpy as np

FAMILIES = ("index", "shape", "broadcast", "loop", "gather")

# A loop's invariant lets the rows vary and keeps the columns as traced, as TensorFlow users
# write it: a statement before may leave them unknown when tracing (`v + v[:, j:j + 1]` has
# C columns or none, decided at run time), and an invariant claiming C columns then is
# false, refused when tracing as by tf.function (eager ignores shape invariants).
ROWS_VARY = "em.TensorShape([None]) + v.shape[1:]"


def _statement(rng: random.Random, c: int, ranked: bool) -> tuple[str, str]:
    """(family, a statement rewriting `v`, of shape [rows, c], to shape [rows', c])."""
    choices = [
        ("index", "v = em.expand_dims(v[i], 0)"),
        ("index", "v = v[i:i + 2]"),
        ("index", "v = v + v[:, j:j + 1]"),
        ("index", "v = v * v[i, j]"),
        ("index", "v = em.slice(v, [em.maximum(i, 0) * 0, 0], [em.shape(v)[0], " + str(c) + "])"),
        ("shape", "v = em.reshape(v, [em.shape(v)[0], -1])"),
        ("shape", f"v = em.reshape(em.reshape(v, [-1]), [-1, {c}])"),
        ("shape", f"v = v + em.zeros([em.shape(v)[0], {c}], v.dtype)"),
        ("shape", f"v = v * em.ones([em.shape(v)[0], 1], v.dtype)"),
        ("shape", "v = v + em.cast(em.reshape(em.range(em.shape(v)[0]), [-1, 1]), v.dtype)"),
        ("shape", f"v = v + em.cast(em.one_hot(em.range(em.shape(v)[0]), {c}), v.dtype)"),
        ("shape", "v = em.broadcast_to(v[:1], em.shape(v)) + v"),
        ("shape", f"v = em.reshape(em.reshape(v, [n, -1]), [-1, {c}])"),
        ("broadcast", "v = v * v[:1]"),
        ("broadcast", "v = v + v[:n]"),
        ("broadcast", "v = v - em.reduce_mean(v, axis=0, keepdims=True)"),
        ("broadcast", f"v = em.matmul(v, em.ones([{c}, {c}], v.dtype))"),
        ("broadcast", "v = em.matmul(em.transpose(v[:n]), v)[:1] + v"),
        ("loop", "_, v = em.while_loop(lambda k, s: k < n, lambda k, s: (k + 1, em.concat("
                 "[s, s[:1] * 2.0], 0)), (em.constant(0), v), shape_invariants=("
                 f"em.TensorShape([]), {ROWS_VARY}))"),
        ("loop", "_, v = em.while_loop(lambda k, s: k < 2, lambda k, s: (k + 1, s[1:]), "
                 f"(em.constant(0), v), shape_invariants=(em.TensorShape([]), {ROWS_VARY}))"),
        ("gather", "v = em.gather(v, em.range(em.minimum(n, em.shape(v)[0])))"),
        ("gather", "v = em.concat([v, v[:n]], 0)"),
        ("gather", "v = em.gather(v, em.range(em.shape(v)[0] - 1, -1, -1))"),
    ]
    if not ranked:  # what TensorFlow allows on a tensor whose rank is unknown when tracing
        choices = [s for s in choices if "em.concat" not in s[1] and "transpose" not in s[1]
                   and "while_loop" not in s[1]]
    return rng.choice(choices)


def generate(seed: int) -> str:
    rng = random.Random(seed)
    c = rng.randint(1, 4)
    dtype = rng.choice(("float32", "float32", "float64"))
    ranked = rng.random() > 0.15
    body, families = [], set()
    for _ in range(rng.randint(1, 4)):
        family, line = _statement(rng, c, ranked)
        families.add(family)
        body.append(f"    {line}")
    outputs = rng.choice(["v, em.reduce_sum(v, axis=0)", "v", "em.reduce_max(v, axis=1)",
                          "v, em.shape(v)"])
    calls = []
    for _ in range(2):
        rows = rng.randint(0, 5)
        x = np.round(np.array([rng.uniform(-4, 4) for _ in range(rows * c)], dtype)
                     .reshape(rows, c), 2)
        i, j, n = (rng.randint(-rows - 2, rows + 2) for _ in range(3))
        n = rng.choice([n, abs(n), min(abs(n), 3)])
        calls.append((x, np.int32(i), np.int32(rng.randint(-c - 1, c)), np.int32(n)))
    shape = f"[None, {c}]" if ranked else "None"
    lines = [f"# dynamic program, seed {seed}: {', '.join(sorted(families))}",
             "import numpy as np", "import ember as em", "",
             f"SIGNATURE = [em.TensorSpec({shape}, em.{dtype}), em.TensorSpec([], em.int32),",
             "             em.TensorSpec([], em.int32), em.TensorSpec([], em.int32)]",
             "VARIABLES = []", "VARIABLES_EXACT = ()", "",
             "", "def f(x, i, j, n):", "    v = x", *body,
             f"    out = ({outputs})",
             "    return out if isinstance(out, tuple) else (out,)", "",
             "", "CALLS = ["]
    for x, i, j, n in calls:
        lines.append(f"    (np.array({x.tolist()!r}, np.{dtype}).reshape({x.shape}), "
                     f"np.int32({int(i)}), np.int32({int(j)}), np.int32({int(n)})),")
    lines += ["]", "EXACT = (False, False)", ""]
    return "\n".join(lines)
