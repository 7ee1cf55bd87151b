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
    body = guard_block(fn.body, ast.Return, replace, flag, into_loops=True)
    _leave_loops(body, flag)
    first = fn.body[0]
    fn.body = (stmts(f"{flag} = False\n{value} = ag__.UndefinedReturnValue()", first)
               + body + stmts(f"return ag__.retval({value})", fn.body[-1]))


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
