"""Rewriting a jump (`return`, `break`, `continue`) as setting a flag, and guarding what
follows it with `if not flag:`, as return_statements, break_statements and
continue_statements all do."""

from __future__ import annotations

import ast
from typing import Callable

from ember.frontend.autograph.ast_util import LocalTransformer, Namer, contains, stmts

_LOOPS = (ast.For, ast.While, ast.AsyncFor)


class LoopJumps(LocalTransformer):
    """Rewrites the `kind` jumps (`break`, `continue`) of each loop, inner loops first,
    into a fresh flag named after `base` set to True; `finish(loop, flag)` completes the
    rewrite and returns what replaces the loop."""

    def __init__(self, namer: Namer, kind: type, base: str,
                 finish: Callable[[ast.AST, str], object]):
        self.namer, self.kind, self.base, self.finish = namer, kind, base, finish

    def _loop(self, node):
        self.generic_visit(node)  # inner loops first: their jumps are their own
        if not contains(node.body, (self.kind,), _LOOPS):
            return node
        flag = self.namer.new(self.base)
        node.body = guard_block(node.body, self.kind,
                                lambda jump: stmts(f"{flag} = True", jump), flag,
                                into_loops=False)
        return self.finish(node, flag)

    visit_While = visit_For = _loop

    def transform(self, fn: ast.FunctionDef) -> None:
        out = []
        for s in fn.body:
            new = self.visit(s)
            out += new if isinstance(new, list) else [new]
        fn.body = out


def guard_block(block: list[ast.stmt], kind: type, replace: Callable[[ast.stmt], list],
                flag: str, into_loops: bool) -> list[ast.stmt]:
    """`block` with each `kind` statement replaced by `replace(stmt)` and the statements
    after one that may jump wrapped in `if not <flag>:` (into nested loops' bodies only
    when `into_loops`: a `return` leaves them, a `break` does not)."""
    stop = () if into_loops else _LOOPS
    out: list[ast.stmt] = []
    for i, s in enumerate(block):
        if isinstance(s, kind):
            out += replace(s)
            return out  # what follows a jump in the same block never runs
        s = _inside(s, kind, replace, flag, into_loops)
        out.append(s)
        rest = block[i + 1:]
        if rest and _jumps(s, flag, stop):
            guarded = guard_block(rest, kind, replace, flag, into_loops)
            out += stmts(f"if not {flag}:\n    __rest", rest[0], __rest=guarded)
            return out
    return out


def _jumps(s: ast.stmt, flag: str, stop: tuple) -> bool:
    """Whether `s` (already rewritten) may set `flag`."""
    for n in _walk(s, stop):
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flag
                                             for t in n.targets):
            return True
    return False


def _walk(node, stop):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                  ast.ClassDef)) and not getattr(child, "_ag_generated",
                                                                 False):
                continue
            if not isinstance(child, stop):
                stack.append(child)


def _inside(s: ast.stmt, kind, replace, flag, into_loops) -> ast.stmt:
    if isinstance(s, _LOOPS) and not into_loops:
        return s
    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and \
            not getattr(s, "_ag_generated", False):
        return s  # a nested function's own `return`s are its own
    for field in ("body", "orelse", "finalbody"):
        block = getattr(s, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            setattr(s, field, guard_block(block, kind, replace, flag, into_loops))
    for handler in getattr(s, "handlers", []) or []:
        handler.body = guard_block(handler.body, kind, replace, flag, into_loops)
    if isinstance(s, ast.Match):
        for case in s.cases:
            case.body = guard_block(case.body, kind, replace, flag, into_loops)
    return s
