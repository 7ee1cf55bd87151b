"""Random Python programs with control flow, for AutoGraph's three-way fuzz: `if`/`elif`/
`else`, `while` (bounded by a counter), `for` over `range(n)` (staged when n is a tensor)
and over a literal range (unrolled), `break`, `continue`, early `return`, `and`/`or`/`not`,
chained comparisons and conditional expressions, over int scalars.

Every value stays in [0, 97) after an assignment (`% 97`), so int32 and Python ints agree;
every variable is defined before the control flow, so Python's and the staged semantics
coincide; every loop terminates. `generate(seed)` returns the source of `f(a, b, n)` that
returns a pair of ints, and `ARGS`, the argument triples to call it with.
"""

from __future__ import annotations

import random

VARS = ("a", "b", "c", "d")


class _Gen:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.loops = 0  # counters and loop targets made so far (unique names)

    def expr(self, depth: int = 0) -> str:
        r = self.r
        choice = r.random()
        if depth > 2 or choice < 0.35:
            return r.choice(VARS) if r.random() < 0.7 else str(r.randint(0, 9))
        if choice < 0.75:
            op = r.choice(["+", "-", "+", "*"])
            right = self.expr(depth + 1) if op != "*" else str(r.randint(0, 4))
            return f"({self.expr(depth + 1)} {op} {right})"
        if choice < 0.85:
            return f"({self.expr(depth + 1)} // {r.randint(1, 5)})"
        return f"({self.expr(depth + 1)} if {self.cond(depth + 1)} else {self.expr(depth + 1)})"

    def cond(self, depth: int = 0) -> str:
        r = self.r
        choice = r.random()
        if depth > 1 or choice < 0.55:
            cmp = r.choice(["<", "<=", ">", ">=", "==", "!="])
            return f"{self.expr(2)} {cmp} {self.expr(2)}"
        if choice < 0.7:
            return f"{self.expr(2)} % {r.randint(2, 5)} == 0"
        if choice < 0.8:
            return f"{r.randint(0, 40)} < {r.choice(VARS)} < {r.randint(41, 96)}"
        if choice < 0.9:
            return f"not ({self.cond(depth + 1)})"
        return f"({self.cond(depth + 1)}) {r.choice(['and', 'or'])} ({self.cond(depth + 1)})"

    def block(self, depth: int, in_loop: bool, indent: int) -> list[str]:
        lines = []
        for _ in range(self.r.randint(1, 3)):
            lines += self.stmt(depth, in_loop, indent)
        return lines

    def stmt(self, depth: int, in_loop: bool, indent: int) -> list[str]:
        r, pad = self.r, "    " * indent
        choice = r.random()
        if depth >= 3 or choice < 0.4:
            v = r.choice(VARS)
            op = r.choice(["=", "+=", "-="])
            return [f"{pad}{v} {op} {self.expr()}", f"{pad}{v} = {v} % 97"]
        if choice < 0.6:
            lines = [f"{pad}if {self.cond()}:"] + self.block(depth + 1, in_loop, indent + 1)
            if r.random() < 0.3:
                lines += [f"{pad}elif {self.cond()}:"] + self.block(depth + 1, in_loop,
                                                                   indent + 1)
            if r.random() < 0.5:
                lines += [f"{pad}else:"] + self.block(depth + 1, in_loop, indent + 1)
            return lines
        if choice < 0.72:
            k = self.loops
            self.loops += 1
            body = [f"{pad}    k{k} += 1"] + self.block(depth + 1, True, indent + 1)
            return [f"{pad}k{k} = 0", f"{pad}while k{k} < {r.randint(1, 6)} and "
                    f"({self.cond()}):"] + body
        if choice < 0.84:
            k = self.loops
            self.loops += 1
            bound = "n" if r.random() < 0.6 else str(r.randint(0, 4))
            body = [f"{pad}    {r.choice(VARS)} = ({r.choice(VARS)} + i{k}) % 97"]
            return [f"{pad}for i{k} in range({bound}):"] + body + self.block(depth + 1, True,
                                                                          indent + 1)
        if in_loop and choice < 0.92:
            return [f"{pad}if {self.cond()}:", f"{pad}    {r.choice(['break', 'continue'])}"]
        return [f"{pad}if {self.cond()}:", f"{pad}    return {self.expr()} % 97, "
                                         f"{self.expr()} % 97"]


def generate(seed: int) -> str:
    g = _Gen(seed)
    body = ["    c = 1", "    d = 2"] + g.block(0, False, 1)
    body.append(f"    return {g.expr()} % 97, {g.expr()} % 97")
    r = random.Random(seed + 1)
    args = [(r.randint(0, 96), r.randint(0, 96), r.randint(0, 5)) for _ in range(3)]
    return ("def f(a, b, n):\n" + "\n".join(body) + "\n\n\nARGS = " + repr(args) + "\n")
