"""What AutoGraph needs to know about names: which a block of statements writes, which it
may read before writing them, and which are live after a statement.

The analysis is flow-sensitive only where it is cheap and safe: straight-line code kills
a name once every path through a statement writes it (`if` with both branches writing,
plain assignments); loops may not run, so they kill nothing. Reads are over-approximated
(a nested function reads every name it mentions), so a name is never wrongly dead: the
cost of over-approximation is only an extra loop or branch variable.
"""

from __future__ import annotations

import ast
from typing import Iterable

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
           ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _names(node: ast.AST, ctx: type) -> set[str]:
    """Names loaded (ctx=ast.Load) or stored (ast.Store, ast.Del) anywhere in `node`,
    not descending into nested scopes for stores (their stores are their own).

    A loop over an explicit stack rather than recursion through `ast.iter_child_nodes`:
    converting a function analyses each statement once per enclosing statement, and the
    recursive walk took ~18% of the control-flow fuzz programs' time (conversion, trace
    and compile); this one is ~1.6x faster."""
    found: set[str] = set()
    load = ctx is ast.Load
    stack = [node]
    nested_from = None  # when set, stack[nested_from:] lie in a nested scope
    while stack:
        n = stack.pop()
        if nested_from is not None and len(stack) < nested_from:
            nested_from = None
        kind = n.__class__
        if kind is ast.Name:
            if isinstance(n.ctx, ctx) and (load or nested_from is None):
                found.add(n.id)
            continue
        if load and kind is ast.FunctionDef and getattr(n, "_ag_generated", False):
            found |= _generated_reads(n)  # exact: a converted body's own locals are not reads
            continue
        if load:
            if kind is ast.Call and _is_state_load(n):  # ag__.ld(locals(), ('a', 'b'))
                found.update(e.value for e in n.args[1].elts)
        elif nested_from is None:
            _bound_names(n, found)
            if isinstance(n, _SCOPES):  # what a def's body stores is its own
                nested_from = len(stack)
        for field in n._fields:
            value = getattr(n, field, None)
            if value.__class__ is list:
                stack += [item for item in value if isinstance(item, ast.AST)]
            elif isinstance(value, ast.AST):
                stack.append(value)
    return found


def _generated_reads(fn: ast.FunctionDef) -> set[str]:
    """The names a def the converters made (a branch or loop body, a test) reads from the
    enclosing function: those it mentions but binds itself (its parameters, what it
    assigns) are its own locals, by Python's scoping, unless declared global or nonlocal.
    A user's nested def stays over-approximated (its defaults and decorators read the
    enclosing scope too)."""
    params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    params |= {a.arg for a in (fn.args.vararg, fn.args.kwarg) if a is not None}
    declared = {name for st in fn.body if isinstance(st, (ast.Global, ast.Nonlocal))
                for name in st.names}
    own = (params | writes(fn.body)) - declared
    return set().union(*(reads(st) for st in fn.body)) - own


def _bound_names(n: ast.AST, found: set[str]) -> None:
    """Adds the names statement or pattern `n` itself binds other than by an `ast.Name`
    target: a def's or class's name, a walrus, a `case` capture, an import."""
    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        found.add(n.name)  # a def writes its name
    elif isinstance(n, ast.NamedExpr):
        found.add(n.target.id)
    elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
        found.add(n.name)  # a `case` pattern's capture
    elif isinstance(n, ast.MatchMapping) and n.rest:
        found.add(n.rest)
    elif isinstance(n, (ast.Import, ast.ImportFrom)):
        found.update((a.asname or a.name).split(".")[0] for a in n.names)


def _is_state_load(n: ast.AST) -> bool:
    """Converted code's read of its state by name (analysis.py runs on it again when an
    enclosing statement is converted)."""
    return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
            and n.func.attr == "ld" and isinstance(n.func.value, ast.Name)
            and n.func.value.id == "ag__" and len(n.args) == 2
            and isinstance(n.args[1], ast.Tuple))


def reads(node: ast.AST) -> set[str]:
    return _names(node, ast.Load)


def writes(nodes: Iterable[ast.AST]) -> set[str]:
    """Names the statements may write (assignments, `for` targets, defs, imports)."""
    out: set[str] = set()
    for n in nodes:
        out |= _names(n, ast.Store)
        out |= _names(n, ast.Del)
    return out


def definite_writes(stmts: list[ast.stmt]) -> set[str]:
    """Names every path through `stmts` writes (that reach their end)."""
    out: set[str] = set()
    for s in stmts:
        out |= _definite(s)
    return out


def _definite(s: ast.stmt) -> set[str]:
    if isinstance(s, ast.If):
        return definite_writes(s.body) & definite_writes(s.orelse)
    if isinstance(s, (ast.With, ast.AsyncWith)):  # its body runs, like a block (or raises)
        return writes([i.optional_vars for i in s.items if i.optional_vars is not None]) | \
            definite_writes(s.body)
    if isinstance(s, (ast.For, ast.While, ast.AsyncFor, ast.Try, ast.Match)):
        return set()  # may not run (or may be left early): kills nothing
    return writes([s])


def reads_before_writes(stmts: list[ast.stmt]) -> set[str]:
    """Names some path through `stmts` may read before writing them."""
    written: set[str] = set()
    out: set[str] = set()
    for s in stmts:
        out |= _exposed(s) - written
        written |= _definite(s)
    return out


def _exposed(s: ast.stmt) -> set[str]:
    """Names `s` may read before it writes them."""
    if isinstance(s, ast.If):
        return reads(s.test) | reads_before_writes(s.body) | reads_before_writes(s.orelse)
    if isinstance(s, ast.While):
        return reads(s.test) | reads_before_writes(s.body) | reads_before_writes(s.orelse)
    if isinstance(s, ast.For):
        body = reads_before_writes(s.body) - _names(s.target, ast.Store)
        return reads(s.iter) | body | reads_before_writes(s.orelse)
    if isinstance(s, ast.AugAssign):
        return reads(s) | _names(s.target, ast.Store)
    if isinstance(s, (ast.With, ast.AsyncWith)):
        items = set().union(*(reads(i.context_expr) for i in s.items))
        bound = writes([i.optional_vars for i in s.items if i.optional_vars is not None])
        return items | (reads_before_writes(s.body) - bound)
    return reads(s)


def live_after(function: ast.AST, target: ast.stmt, names: set[str]) -> set[str]:
    """Those of `names` that some path after `target` (a statement inside `function`) may
    read before writing: what follows it in each enclosing block, and, inside a loop, the
    loop's next iteration."""
    path = _path_to(function, target)
    live: set[str] = set()
    pending = set(names)
    for owner, block, index in reversed(path):
        rest = block[index + 1:] + _after_block(owner, block)
        live |= pending & reads_before_writes(rest)
        pending -= definite_writes(rest) | live
        if isinstance(owner, (ast.While, ast.For)) and block is owner.body and pending:
            # the next iteration: its test (a `for` loop's extra tests, for break and
            # return flags) and its body
            tests = [owner.test] if isinstance(owner, ast.While) else \
                getattr(owner, "_ag_extra_tests", [])
            again = reads_before_writes(owner.body).union(*(reads(t) for t in tests))
            live |= pending & again
            pending -= live
    return live


def _after_block(owner: ast.AST, block: list) -> list[ast.stmt]:
    """What may run after `block` of `owner` before the statements that follow `owner`: a
    loop's `else:` after its body, a `try`'s `else:` and `finally:` after its body (and
    `finally:` after a handler or the `else:`). Reads there count; as a branch, its
    writes do not kill (definite_writes of a loop or try is empty)."""
    if isinstance(owner, (ast.For, ast.While)) and block is owner.body and owner.orelse:
        return [ast.If(ast.Constant(True), owner.orelse, [])]  # (may run: kills nothing)
    if isinstance(owner, ast.Try):
        after = owner.orelse if block is owner.body else []
        return [ast.If(ast.Constant(True), after + owner.finalbody, [])] if \
            after or owner.finalbody else []
    if isinstance(owner, ast.ExceptHandler) and getattr(owner, "_ag_try", None) is not None:
        finalbody = owner._ag_try.finalbody
        return [ast.If(ast.Constant(True), finalbody, [])] if finalbody else []
    return []


def _path_to(root: ast.AST, target: ast.stmt) -> list[tuple[ast.AST, list, int]]:
    """(owner, statement list, index) from `root`'s body down to `target`."""
    def search(owner: ast.AST) -> list | None:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(owner, field, None)
            if not isinstance(block, list):
                continue
            for i, s in enumerate(block):
                if s is target:
                    return [(owner, block, i)]
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue
                found = search(s)
                if found is not None:
                    return [(owner, block, i)] + found
        for handler in getattr(owner, "handlers", []) or []:
            handler._ag_try = owner
            found = search(handler)
            if found is not None:
                return found
        for case in getattr(owner, "cases", []) or []:
            found = search(case)
            if found is not None:
                return found
        return None
    return search(root) or []
