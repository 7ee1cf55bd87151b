"""Converting a Python function: its source -> AST -> the converters -> a new function.

The converted function is compiled with the user's file name and the original line numbers
(the AST keeps them; generated statements take the line of the statement they replace), so
tracebacks, op locations and error messages point at the user's code. It is built from the
original's globals, defaults and closure cells (a closure variable the caller rebinds
later is seen by both), plus one more cell, `ag__`, the operators. Conversions are cached
per function object.

A lambda is converted as a function returning its expression (its calls, `and`/`or` and
conditional expressions), found in its file's syntax tree by where its code is. What
cannot be converted runs as written: functions without source (the REPL, `exec`),
builtins, generators' callers aside; a function whose source is missing warns once (a
lambda does not). Ember's own functions, the standard library's and other installed
packages' are never converted, nor is anything marked with `do_not_convert`.
"""

from __future__ import annotations

import ast
import collections
import copy
import functools
import inspect
import linecache
import os
import re
import sys
import textwrap
import tokenize
import types
import warnings
import weakref

from ember.dialects.ember.errors import EmberWarning
from ember.frontend.autograph import code_cache, loops, operators, py_builtins
from ember.frontend.autograph.ast_util import Namer
from ember.frontend.autograph.converters import (asserts, break_statements, call_trees,
                                                 continue_statements, control_flow,
                                                 logical_expressions, return_statements)
from ember.frontend.user_code import user_stacklevel

_LIBRARY_DIRS = ("site-packages", "dist-packages")
_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # function -> converted
# per code object (not weakly referenceable), the most recently used ones
_CACHED_CODE = 4096
_INNER = "__ag_converted"
_trees: collections.OrderedDict = collections.OrderedDict()
_codes: collections.OrderedDict = collections.OrderedDict()
_file_trees: dict = {}  # file -> (its linecache lines, their syntax tree), for lambdas
_warned: set = set()


class AutoGraphWarning(EmberWarning):
    """A function runs unconverted: Python control flow on tensors in it will fail."""


def do_not_convert(fn):
    """Marks `fn` to run as written when converted code calls it (tf.autograph's)."""
    fn.__ag_do_not_convert__ = True
    return fn


def is_user_function(fn) -> bool:
    """Whether `fn` is the user's own Python function (converted when called)."""
    if not isinstance(fn, types.FunctionType):
        return False
    if getattr(fn, "__ag_do_not_convert__", False) or getattr(fn, "__ag_converted__", False):
        return False
    if "ag__" in fn.__code__.co_freevars:  # a lambda of converted code: converted with it
        return False
    top = (getattr(fn, "__module__", None) or "").split(".")[0]
    if top == "ember" or top in sys.stdlib_module_names:
        return False
    return not any(d in fn.__code__.co_filename.split(os.sep) for d in _LIBRARY_DIRS)


def convert(fn):
    """`fn` converted (bound methods and `functools.partial`s too); `fn` itself where it
    cannot be."""
    if isinstance(fn, functools.partial):
        return functools.partial(convert(fn.func), *fn.args, **fn.keywords)
    if isinstance(fn, types.MethodType):
        inner = convert(fn.__func__)
        return fn if inner is fn.__func__ else types.MethodType(inner, fn.__self__)
    if not is_user_function(fn):
        return fn
    if fn not in _cache:
        _cache[fn] = _convert(fn)
    return _cache[fn]


def to_code(fn) -> str:
    """The converted source of `fn` (tf.autograph.to_code)."""
    fn = getattr(fn, "python_function", fn)
    if isinstance(fn, types.MethodType):
        fn = fn.__func__
    if isinstance(fn, functools.partial):
        fn = fn.func
    tree = _converted_tree(fn)
    if tree is None:
        raise ValueError(f"the source of {fn!r} is not available: it cannot be converted")
    return ast.unparse(tree) + "\n"


def converted_call(f, /, *args, **kwargs):
    """A call in converted code: `f` converted first when it is user code; the builtins
    AutoGraph stages on tensors (`range`, `len`, `int`, `sorted`, ...) run their overloads
    in py_builtins.py."""
    overload = py_builtins.overload_of(f)
    if overload is not None:
        return overload(*args, **kwargs)
    return convert(f)(*args, **kwargs)


AG = types.SimpleNamespace(**{name: getattr(module, name) for module in (operators, loops)
                              for name in module.__all__}, converted_call=converted_call)


# the line a code object's source starts on: its `def`, a decorator or a lambda (as
# inspect.findsource looks for it)
_DEF_LINE = re.compile(r"^(\s*def\s)|(\s*async\s+def\s)|(.*(?<!\w)lambda(:|\s))|^(\s*@)")


def _source(fn) -> str | None:
    """The source of `fn`'s own code (not of what `fn.__wrapped__` names), or None where
    there is none. What inspect.getsource(code) finds, without its getmodule() search of
    every loaded module for the file (~90 ms on a first call in a process with ember,
    numpy and MLIR loaded): the lines come from linecache, as inspect's do. The block is
    found by `_block` where it can (tokenize, which inspect.getblock runs, compiles its
    regular expressions on first use: ~5-10 ms of a warm start's first call)."""
    code = fn.__code__
    filename = code.co_filename
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, getattr(fn, "__globals__", None))
    start = code.co_firstlineno - 1
    if not lines or not 0 <= start < len(lines):
        return None
    while start > 0 and not _DEF_LINE.match(lines[start]):
        start -= 1
    block = _block(lines, start, code)
    if block is not None:
        return block
    try:
        return "".join(inspect.getblock(lines[start:]))
    except (IndentationError, SyntaxError, tokenize.TokenError):
        return None


def _block(lines: list[str], start: int, code: types.CodeType) -> str | None:
    """The source of the `def` at `lines[start]` (0-based) whose code is `code`, found by
    indentation: every line up to the last one any of its instructions (or those of the
    functions, classes and lambdas inside it) spans, then the more indented, blank and
    comment lines after it. None unless that parses as one function definition (a block
    cut inside a string literal does not): `inspect.getblock` decides then."""
    last = _last_line(code)
    header = lines[start]
    indent = len(header) - len(header.lstrip())
    if last is None or last <= start:
        return None
    end = last  # 1-based last line = 0-based index of the line after it
    while end < len(lines):
        line = lines[end]
        text = line.strip()
        if text and not text.startswith("#") and len(line) - len(line.lstrip()) <= indent:
            break
        end += 1
    source = "".join(lines[start:end])
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        return None
    return source


def _last_line(code: types.CodeType) -> int | None:
    """The last source line (1-based) spanned by an instruction of `code` or of a code
    object inside it."""
    last = None
    for _, end_line, _, _ in code.co_positions():
        if end_line is not None and (last is None or end_line > last):
            last = end_line
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            inner = _last_line(const)
            if inner is not None and (last is None or inner > last):
                last = inner
    return last


def _converted_tree(fn) -> ast.FunctionDef | None:
    """The converted AST of `fn`'s source (cached per code object: the closures one `def`
    makes share it), or None where there is no source."""
    code = fn.__code__
    if code in _trees:
        _trees.move_to_end(code)
        return _trees[code]
    if code.co_name == "<lambda>":
        node = _lambda_def(fn)
        if node is None:
            return None
        tree = ast.Module([node], type_ignores=[])
    else:
        source = _source(fn)
        if source is None:
            return None
        tree = ast.parse(textwrap.dedent(source))
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):
            return None
        ast.increment_lineno(tree, code.co_firstlineno - 1)  # (its decorators' line)
        node.decorator_list = []
    namer = Namer(node)
    asserts.transform(node)
    return_statements.transform(node, namer)
    break_statements.transform(node, namer)
    continue_statements.transform(node, namer)
    control_flow.transform(node, namer)
    logical_expressions.transform(node)
    call_trees.transform(node)
    ast.fix_missing_locations(tree)
    _trees[code] = node
    if len(_trees) > _CACHED_CODE:
        _trees.popitem(last=False)
    return node


def _lambda_def(fn) -> ast.FunctionDef | None:
    """`def <lambda>(args): return body` for the lambda `fn`, from its file's syntax tree
    (absolute line numbers): of the lambdas on its first line, the smallest whose span
    holds every position of its code (lambdas on one line differ there). None where the
    file is missing or no longer parses."""
    code = fn.__code__
    lines = linecache.getlines(code.co_filename, getattr(fn, "__globals__", None))
    cached = _file_trees.get(code.co_filename)
    if cached is None or cached[0] is not lines:  # (linecache's list: new when it changes)
        try:
            cached = _file_trees[code.co_filename] = (lines, ast.parse("".join(lines)))
        except (SyntaxError, ValueError):
            return None
        if len(_file_trees) > 16:
            _file_trees.pop(next(iter(_file_trees)))
    tree = cached[1]
    spans = [(a, c, b, d) for a, b, c, d in code.co_positions()  # (but RESUME's, RETURN's:
             if None not in (a, b, c, d) and (a, c) != (b, d)]      # empty, at column 0)
    first = min(((a, c) for a, c, _, _ in spans), default=None)
    last = max(((b, d) for _, _, b, d in spans), default=None)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda)
             and n.lineno == code.co_firstlineno and first is not None
             and (n.lineno, n.col_offset) <= first and last <= (n.end_lineno, n.end_col_offset)]
    if not found:
        return None
    lam = min(found, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
    lam = copy.deepcopy(lam)  # (the converters change it; the file's tree is kept)
    node = ast.FunctionDef(name="__ag_lambda", args=lam.args,
                           body=[ast.copy_location(ast.Return(lam.body), lam.body)],
                           decorator_list=[], returns=None, type_comment=None)
    return ast.copy_location(node, lam)


def _converted_code(fn) -> types.CodeType | None:
    """The code object of `fn` converted (cached per code object), or None."""
    code = fn.__code__
    if code in _codes:
        _codes.move_to_end(code)
        return _codes[code]
    inner, entry = code_cache.load(code)  # converted by an earlier process
    if inner is None:
        inner = _compiled(fn, code)
        if inner is None:
            return None
        code_cache.store(entry, inner)
    _codes[code] = inner
    if len(_codes) > _CACHED_CODE:
        _codes.popitem(last=False)
    return inner


def _compiled(fn, code: types.CodeType) -> types.CodeType | None:
    node = _converted_tree(fn)
    if node is None:
        return None
    # Defined under a private name: under its own, the factory's binding of the name would
    # make the function's references to it (a global, or a recursive call) a closure cell.
    inner_def = copy.copy(node)
    inner_def.name = _INNER
    factory = ast.FunctionDef(
        name="__ag_factory", args=ast.arguments(
            posonlyargs=[], args=[ast.arg(n) for n in ("ag__",) + code.co_freevars],
            kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[inner_def, ast.Return(ast.Name(_INNER, ast.Load()))], decorator_list=[])
    module = ast.Module([factory], type_ignores=[])
    ast.copy_location(factory, node)
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", dont_inherit=True)
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == _INNER)
    return inner.replace(co_name=code.co_name, co_qualname=code.co_qualname)


def _convert(fn):
    inner = _converted_code(fn)
    if inner is None:
        if fn.__code__.co_name != "<lambda>":  # (a lambda without source runs as written,
            _warn_once(fn)                       # as lambdas did before they were converted)
        return fn
    cells = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    cells["ag__"] = types.CellType(AG)
    closure = tuple(cells[name] for name in inner.co_freevars)
    new = types.FunctionType(inner, fn.__globals__, fn.__name__, fn.__defaults__, closure)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__, new.__doc__, new.__module__ = fn.__qualname__, fn.__doc__, fn.__module__
    new.__dict__.update(fn.__dict__)
    new.__ag_converted__ = True
    return new


def _warn_once(fn) -> None:
    key = (fn.__code__.co_filename, fn.__code__.co_firstlineno)
    if key in _warned:
        return
    _warned.add(key)
    warnings.warn(f"AutoGraph could not convert {fn.__qualname__} "
                  f"({fn.__code__.co_filename}:{fn.__code__.co_firstlineno}): its source is "
                  f"not available, so it runs as written; Python `if`/`while`/`for` on "
                  f"tensors in it will fail. Define it in a file to have it converted.",
                  AutoGraphWarning, stacklevel=user_stacklevel())
