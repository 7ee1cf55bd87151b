"""Early `return` -> flags: `do_return = True; retval_ = value`, what follows guarded by
`if not do_return:`, loops left by `not do_return` in their test, and one `return
ag__.retval(retval_)` at the end. A function whose only returns are its last top-level
statements keeps them, each value checked by `ag__.retval` (a variable a staged `if`
defined in one branch only is an error there).

    if x > 0:                    do_return = False
        return x          ->     retval_ = ag__.UndefinedReturnValue()
    return -x                    if x > 0:
                                     do_return = True
                                     retval_ = x
                                 if not do_return:
                                     do_return = True
                                     retval_ = -x
                                 return ag__.retval(retval_)

A body that may run off its end (Python returns None there) ends with
`ag__.retval_or_none(retval_, do_return, line)` instead: None where no `return` ran, and
an error where a tensor decides whether one ran, as TensorFlow's AutoGraph raises (the
placeholder zeros a staged `if` gives the value on the other path would be returned).
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import Namer, expr, stmts, walk_local
from ember.frontend.autograph.converters.guards import guard_block


def transform(fn: ast.FunctionDef, namer: Namer) -> None:
    returns = [n for n in walk_local(fn) if isinstance(n, ast.Return)]
    if all(any(r is s for s in fn.body) for r in returns):
        for r in returns:  # a value undefined on some path is an error, not a result
            if r.value is not None:
                r.value = expr("ag__.retval(__v)", r, __v=r.value)
        return
    flag, value = namer.new("do_return"), namer.new("retval_")

    def replace(r: ast.Return) -> list[ast.stmt]:
        returned = r.value if r.value is not None else ast.Constant(None)
        return stmts(f"{flag} = True\n{value} = __v", r, __v=returned)
    falls_off = not _ends(fn.body)  # Python returns None at the end of such a body
    body = guard_block(fn.body, ast.Return, replace, flag, into_loops=True)
    _leave_loops(body, flag)
    first = fn.body[0]
    end = f"ag__.retval_or_none({value}, {flag}, {fn.lineno})" if falls_off and \
        any(r.value is not None for r in returns) else f"ag__.retval({value})"
    fn.body = (stmts(f"{flag} = False\n{value} = ag__.UndefinedReturnValue()", first)
               + body + stmts(f"return {end}", fn.body[-1]))


def _ends(block: list[ast.stmt]) -> bool:
    """Whether no path through `block` reaches its end: one of its statements always
    returns or raises (an `if` both of whose branches do, a `with` whose body does, a
    `while True:` left by no `break`)."""
    for s in block:
        if isinstance(s, (ast.Return, ast.Raise)):
            return True
        if isinstance(s, ast.If) and _ends(s.body) and _ends(s.orelse):
            return True
        if isinstance(s, ast.With) and _ends(s.body):
            return True
        if isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and s.test.value \
                and not any(isinstance(n, ast.Break) for n in _own_loop_body(s)):
            return True
    return False


def _own_loop_body(loop: ast.AST):
    """The nodes of `loop`'s body that a `break` there would leave `loop` from (not those
    of nested loops, functions or classes)."""
    stack = list(loop.body)
    while stack:
        n = stack.pop()
        yield n
        if not isinstance(n, (ast.While, ast.For, ast.AsyncFor, ast.FunctionDef,
                              ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))


def _leave_loops(block: list[ast.stmt], flag: str) -> None:
    """Adds `not flag` to the test of every loop that may set it."""
    for s in block:
        for n in walk_local(s):
            if isinstance(n, (ast.While, ast.For)) and _sets(n, flag):
                test = expr(f"not {flag}", n)
                if isinstance(n, ast.While):
                    n.test = ast.copy_location(ast.BoolOp(ast.And(), [test, n.test]), n.test)
                else:
                    n._ag_extra_tests = getattr(n, "_ag_extra_tests", []) + [test]
                if n.orelse:  # a loop left by a return skips its `else:`
                    n.orelse = stmts(f"if not {flag}:\n    __rest", n.orelse[0],
                                     __rest=n.orelse)


def _sets(loop: ast.AST, flag: str) -> bool:
    """Whether the loop's body may set `flag` (a return inside it)."""
    return any(isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == flag
                                                 for t in n.targets)
               for s in loop.body for n in walk_local(s))
