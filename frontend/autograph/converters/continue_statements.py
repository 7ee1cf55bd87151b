"""`continue` -> `continue_ = True`, the rest of the loop body guarded by
`if not continue_:`; the flag is reset at the top of each iteration.

    for i in em.range(n):        for i in em.range(n):
        if i % 2 == 0:   ->          continue_ = False
            continue                 if i % 2 == 0:
        s += i                           continue_ = True
                                     if not continue_:
                                         s += i
"""

from __future__ import annotations

import ast

from ember.frontend.autograph.ast_util import Namer, stmts
from ember.frontend.autograph.converters.guards import LoopJumps


def _finish(node, flag: str):
    node.body = stmts(f"{flag} = False", node.body[0]) + node.body
    return node


def transform(fn: ast.FunctionDef, namer: Namer) -> None:
    LoopJumps(namer, ast.Continue, "continue_", _finish).transform(fn)
