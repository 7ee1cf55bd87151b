"""`if`, `while` and `for` -> `ag__.if_stmt`, `while_stmt`, `for_stmt` over functions of
the statement's state: the variables it may change that are read in it before being
written or may be read after it (analysis.py). Inner statements are converted first.

    if x > 0:                        def if_body(x):
        x = x * x                        x = x * x
    else:                    ->          return (x,)
        x = 0                        def else_body(x):
                                         x = 0
                                         return (x,)
                                     (x,) = ag__.if_stmt(x > 0, if_body, else_body,
                                                         ag__.ld(locals(), ('x',)), ('x',), 2)

Compound symbols (`self.total`, `o.v`, `l[0]`: an attribute or a constant subscript of a
name) assigned in a statement are its variables too, as in TensorFlow's AutoGraph: each is
loaded into a fresh local before the statement (`ag__.ldc`: undefined if missing), set from
it at the start of every branch, loop body and test (code there reads the object; one not
defined before is removed, so a branch's trace does not see what the other set), loaded
back at their end, and stored after the statement (`ag__.stc`).

A statement whose body holds `yield` or `try`, and a `while` whose test binds a name with
`:=`, stays Python: its test is wrapped in `ag__.python_only`, which raises a located error
if it turns out to be a tensor.
"""

from __future__ import annotations

import ast
import copy
import re

from ember.frontend.autograph import analysis
from ember.frontend.autograph.ast_util import (Namer, contains, expr, generated, is_opaque,
                                               name_tuple, stmts, target_tuple, walk_local)

_PYTHON_ONLY = ((ast.Yield, ast.YieldFrom), "`yield`"), ((ast.Try,), "a `try` statement")


class _ControlFlow:
    def __init__(self, fn: ast.FunctionDef, namer: Namer):
        self.fn = fn
        self.namer = namer
        declared = [n for n in walk_local(fn) if isinstance(n, (ast.Global, ast.Nonlocal))]
        self.globals = {name for d in declared if isinstance(d, ast.Global) for name in d.names}
        self.nonlocals = {name for d in declared if isinstance(d, ast.Nonlocal)
                          for name in d.names}
        self.display: dict[str, str] = {}  # a compound symbol's local -> its source text

    def _shown(self, state: list[str]) -> str:
        """The names of `state` as errors show them (a compound symbol's own text)."""
        return name_tuple([self.display.get(n, n) for n in state])

    def block(self, block: list[ast.stmt]) -> None:
        """Converts the statements of `block` in place, inner ones first."""
        i = 0
        while i < len(block):
            s = block[i]
            if is_opaque(s):
                i += 1
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                    self.block(inner)
            for handler in getattr(s, "handlers", []) or []:
                self.block(handler.body)
            for case in getattr(s, "cases", []) or []:
                self.block(case.body)
            new = self.convert(s) if isinstance(s, (ast.If, ast.While, ast.For)) else None
            if new is None:
                i += 1
                continue
            block[i:i + 1] = new
            i += len(new)

    def convert(self, s) -> list[ast.stmt] | None:
        for kinds, what in _PYTHON_ONLY:
            if contains(s.body + s.orelse, kinds):
                return self._python_only(s, what)
        if isinstance(s, ast.While) and contains([s.test], (ast.NamedExpr,), (ast.Lambda,)):
            # the test runs in a function of its own, where `:=` would bind a local (a
            # comprehension's `:=` binds in the enclosing function too; a lambda's does not)
            return self._python_only(s, "`:=`")
        before, after = self._compounds(s)
        if isinstance(s, ast.If):
            return before + self._if(s) + after
        s.orelse = after + s.orelse  # a loop's `else` runs after its variables are stored
        return before + (self._while(s) if isinstance(s, ast.While) else self._for(s))

    def _compounds(self, s) -> tuple[list[ast.stmt], list[ast.stmt]]:
        """Rewrites the compound symbols `s` assigns into locals (module docstring); returns
        the statements that go before and after it."""
        blocks = [s.body] + ([s.orelse] if isinstance(s, ast.If) else [])
        rebound = analysis.writes([st for block in blocks for st in block])
        found: dict[str, ast.expr] = {}
        for target in _assigned_targets(blocks):
            key = ast.unparse(target)
            if _compound_root(target) not in rebound and key not in found:
                found[key] = target
        if not found:
            return [], []
        before, enter, leave = [], [], []
        for key, target in sorted(found.items()):
            local = self.namer.new(re.sub(r"\W+", "_", key).strip("_") or "compound")
            self.display[local] = key
            load = ast.unparse(_as_load(target))
            owner = ast.unparse(_as_load(target.value))
            slot = repr(target.attr) if isinstance(target, ast.Attribute) else \
                ast.unparse(target.slice)
            attribute = isinstance(target, ast.Attribute)
            before += stmts(f"{local} = ag__.ldc(lambda: {load}, {key!r})", s)
            enter += stmts(f"ag__.stc({owner}, {slot}, {local}, {attribute})", s)
            leave += stmts(f"{local} = ag__.ldc(lambda: {load}, {key!r})", s)
        after = [_copy(st) for st in enter]
        s.body = [_copy(st) for st in enter] + s.body + leave
        if isinstance(s, ast.If):
            s.orelse = [_copy(st) for st in enter] + s.orelse + [_copy(st) for st in leave]
        else:
            s._ag_enter = enter  # the while test and the for's extra test read them too
        return before, after

    def _python_only(self, s, what: str) -> None:
        """Leaves `s` as Python, its test checked by `ag__.python_only` (returns None: no
        replacement)."""
        attr = "iter" if isinstance(s, ast.For) else "test"
        setattr(s, attr, expr(f"ag__.python_only(__t, {what!r}, {s.lineno})", s,
                              __t=getattr(s, attr)))
        return None

    def _state(self, s, blocks: list[list[ast.stmt]], extra_reads: set[str]) -> list[str]:
        """The variables `s` may change that it reads before writing them (on any path:
        each of `blocks` is one, as an `if`'s branches) or that may be read after it."""
        changed = set().union(*(analysis.writes(b) for b in blocks)) - self.globals - \
            self.nonlocals
        needed = set().union(*(analysis.reads_before_writes(b) for b in blocks)) | extra_reads
        needed |= analysis.live_after(self.fn, s, changed - needed)
        return sorted(changed & needed)

    def _def(self, base: str, params: list[str], body: list[ast.stmt], at) -> ast.stmt:
        name = self.namer.new(base)
        declare = []
        written = analysis.writes(body)
        if self.globals & written:
            declare += stmts("global " + ", ".join(sorted(self.globals & written)), at)
        if self.nonlocals & written:
            declare += stmts("nonlocal " + ", ".join(sorted(self.nonlocals & written)), at)
        (fn,) = stmts(f"def {name}({', '.join(params)}):\n    __body", at,
                      __body=declare + (body or [ast.Pass()]))
        return generated(fn)

    def _if(self, s: ast.If) -> list[ast.stmt]:
        state = self._state(s, [s.body, s.orelse], set())
        ret = stmts(f"return {target_tuple(state)}", s)
        then = self._def("if_body", state, s.body + ret, s)
        other = self._def("else_body", state, s.orelse + ret, s)
        call = (f"ag__.if_stmt(__test, {then.name}, {other.name}, "
                f"ag__.ld(locals(), {name_tuple(state)}), {self._shown(state)}, {s.lineno})")
        line = f"{target_tuple(state)} = {call}" if state else call
        return [then, other] + stmts(line, s, __test=s.test)

    def _while(self, s: ast.While) -> list[ast.stmt]:
        state = self._state(s, [s.body], analysis.reads(s.test))
        opts, body = _loop_options(s.body)
        ret = stmts(f"return {target_tuple(state)}", s)
        test = self._def("loop_test", state, [_copy(st) for st in getattr(s, "_ag_enter", [])]
                         + stmts("return __t", s, __t=s.test), s)
        loop = self._def("loop_body", state, body + ret, s)
        call = (f"ag__.while_stmt({test.name}, {loop.name}, "
                f"ag__.ld(locals(), {name_tuple(state)}), {self._shown(state)}, {s.lineno}, "
                f"__opts)")
        line = f"{target_tuple(state)} = {call}" if state else call
        return [test, loop] + stmts(line, s, __opts=opts) + s.orelse

    def _for(self, s: ast.For) -> list[ast.stmt]:
        itr = self.namer.new("itr")
        bind = stmts("__target = __item", s, __target=s.target,
                     __item=ast.Name(itr, ast.Load()))
        extra = getattr(s, "_ag_extra_tests", [])
        extra_reads = set().union(*(analysis.reads(t) for t in extra)) if extra else set()
        state = self._state(s, [bind + s.body], extra_reads)
        opts, body = _loop_options(s.body)
        ret = stmts(f"return {target_tuple(state)}", s)
        loop = self._def("loop_body", [itr] + state, bind + body + ret, s)
        defs = [loop]
        extra_name = "None"
        if extra:
            test = extra[0] if len(extra) == 1 else \
                ast.copy_location(ast.BoolOp(ast.And(), extra), extra[0])
            check = self._def("extra_test", state, [_copy(st) for st in getattr(
                s, "_ag_enter", [])] + stmts("return __t", s, __t=test), s)
            defs.append(check)
            extra_name = check.name
        call = (f"ag__.for_stmt(__iterable, {loop.name}, ag__.ld(locals(), "
                f"{name_tuple(state)}), {self._shown(state)}, {s.lineno}, {extra_name}, "
                "__opts)")
        line = f"{target_tuple(state)} = {call}" if state else call
        return defs + stmts(line, s, __iterable=s.iter, __opts=opts) + s.orelse


def _loop_options(body: list[ast.stmt]) -> tuple[ast.expr, list[ast.stmt]]:
    """The keywords of a `set_loop_options(...)` call among the body's statements, as a
    `dict(...)` evaluated before the loop (None if there is none), and the body without
    it."""
    for i, s in enumerate(body):
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
            f = s.value.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            if name == "set_loop_options":
                call = ast.Call(ast.Name("dict", ast.Load()), [], s.value.keywords)
                return ast.copy_location(call, s), body[:i] + body[i + 1:]
    return ast.Constant(None), body


def transform(fn: ast.FunctionDef, namer: Namer) -> None:
    _ControlFlow(fn, namer).block(fn.body)


def _assigned_targets(blocks: list[list[ast.stmt]]):
    """The attribute and constant-subscript targets the statements assign (with `=`, an
    augmented or annotated assignment), not looking into defs, classes and lambdas."""
    for block in blocks:
        for top in block:
            for node in walk_local(top):
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and \
                        getattr(node, "value", True) is not None:
                    targets = [node.target]
                else:
                    continue
                for t in targets:
                    yield from _flat_targets(t)


def _flat_targets(t: ast.expr):
    if isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from _flat_targets(e)
    elif isinstance(t, ast.Starred):
        yield from _flat_targets(t.value)
    elif _compound_root(t) is not None:
        yield t


def _compound_root(t: ast.expr) -> str | None:
    """The name at the root of `a.b.c` or `a.b[0]` (constant subscripts only), else None."""
    if isinstance(t, ast.Subscript):
        if not isinstance(t.slice, ast.Constant):
            return None
        t = t.value
    elif not isinstance(t, ast.Attribute):
        return None
    while isinstance(t, ast.Attribute):
        t = t.value
    return t.id if isinstance(t, ast.Name) else None


def _as_load(t: ast.expr) -> ast.expr:
    node = _copy(t)
    for n in ast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = ast.Load()
    return node


def _copy(node):
    return copy.deepcopy(node)
