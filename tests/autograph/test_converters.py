"""Each converter alone, on source text: what it generates, and that the result still
runs as Python on Python values (the conversion must not change plain-Python behaviour)."""

import ast
import textwrap

import pytest

from ember.frontend.autograph import analysis
from ember.frontend.autograph.ast_util import Namer
from ember.frontend.autograph.conversion import AG
from ember.frontend.autograph.converters import (asserts, break_statements, call_trees,
                                                 continue_statements, control_flow,
                                                 logical_expressions, return_statements)


def _fn(source: str) -> ast.FunctionDef:
    return ast.parse(textwrap.dedent(source)).body[0]


def _run(fn: ast.FunctionDef, *args):
    ast.fix_missing_locations(fn)
    namespace = {"ag__": AG}
    exec(compile(ast.Module([fn], []), "<test>", "exec"), namespace)
    return namespace[fn.name](*args)


def test_asserts_become_assert_stmt_with_a_lazy_message():
    fn = _fn("def f(x):\n    assert x > 0, 'bad ' + str(x)\n    return x")
    asserts.transform(fn)
    assert "ag__.assert_stmt(x > 0, lambda: 'bad ' + str(x), 2)" in ast.unparse(fn)
    assert _run(fn, 3) == 3
    with pytest.raises(AssertionError, match="bad -1"):
        _run(_fn_converted(asserts, "def f(x):\n    assert x > 0, 'bad ' + str(x)"), -1)


def _fn_converted(converter, source, *more):
    fn = _fn(source)
    namer = Namer(fn)
    for c in (converter,) + more:
        if c in (asserts, logical_expressions, call_trees):
            c.transform(fn)
        else:
            c.transform(fn, namer)
    return fn


RETURNS = """
def f(x):
    if x > 3:
        return x * 10
    for i in range(x):
        if i == 2:
            return -i
    return x
"""


def test_returns_become_flags_and_one_final_return():
    fn = _fn_converted(return_statements, RETURNS)
    code = ast.unparse(fn)
    returns = [line.strip() for line in code.splitlines() if line.strip().startswith("return")]
    assert returns == ["return ag__.retval(retval_)"]
    assert "do_return = True" in code and "if not do_return:" in code
    assert [_run(fn, x) for x in (5, 4, 1, 3)] == [50, 40, 1, -2]


def test_tail_returns_stay_and_are_checked():
    fn = _fn_converted(return_statements, "def f(x):\n    y = x + 1\n    return y")
    assert ast.unparse(fn).endswith("return ag__.retval(y)")


BREAKS = """
def f(n):
    s = 0
    for i in range(n):
        if i > 4:
            break
        s += i
    else:
        s = -1
    return s
"""


def test_breaks_become_a_flag_the_loop_tests():
    fn = _fn_converted(break_statements, BREAKS)
    code = ast.unparse(fn)
    assert "break" not in code.replace("break_", "")
    assert "break_ = False" in code and "if not break_:" in code
    assert [_run(fn, n) for n in (10, 3)] == [10, -1]


CONTINUES = """
def f(n):
    s = 0
    i = 0
    while i < n:
        i += 1
        if i % 2:
            continue
        s += i
    return s
"""


def test_continues_become_a_flag_reset_each_iteration():
    fn = _fn_converted(continue_statements, CONTINUES)
    code = ast.unparse(fn)
    assert "continue" not in code.replace("continue_", "")
    assert [_run(fn, n) for n in (6, 0)] == [12, 0]


def test_control_flow_makes_functions_of_the_state():
    fn = _fn_converted(control_flow, CONTINUES.replace("continue", "pass"))
    code = ast.unparse(fn)
    assert "def loop_test(i, s):" in code and "def loop_body(i, s):" in code
    assert "(i, s) = ag__.while_stmt(" in code or "i, s = ag__.while_stmt(" in code
    assert _run(fn, 6) == 12 + 3 + 5 + 1  # `pass` in place of continue: every i summed


def test_a_temporary_of_the_loop_body_is_not_carried():
    fn = _fn_converted(control_flow, "def f(n):\n    s = 0\n    for i in range(n):\n"
                       "        t = i * 2\n        s += t\n    return s")
    assert "def loop_body(itr, s):" in ast.unparse(fn)
    assert _run(fn, 4) == 12


def test_logical_expressions_are_lazy():
    fn = _fn_converted(logical_expressions, "def f(x):\n    return x and 1 / x or not x")
    code = ast.unparse(fn)
    assert "ag__.or_(lambda: ag__.and_(lambda: x, lambda: 1 / x), lambda: ag__.not_(x))" \
        in code
    assert _run(fn, 0) is True and _run(fn, 2) == 0.5


def test_chained_comparisons_evaluate_each_operand_once():
    fn = _fn_converted(logical_expressions, "def f(x):\n    return 0 < x < 10")
    assert "ag__.compare_chain(0, ('Lt', lambda: x), ('Lt', lambda: 10))" in ast.unparse(fn)
    assert [_run(fn, x) for x in (-1, 5, 10)] == [False, True, False]
    calls = []
    fn = _fn_converted(logical_expressions, "def f(g, n):\n    return 0 < g() < n")
    assert _run(fn, lambda: calls.append(1) or 3, 5) is True and calls == [1]
    assert _run(fn, lambda: calls.append(1) or -3, 5) is False and calls == [1, 1]


def test_calls_go_through_converted_call_but_frame_builtins_do_not():
    fn = _fn_converted(call_trees, "def f(x):\n    return len(locals()) + abs(x)")
    code = ast.unparse(fn)
    assert "ag__.converted_call(len, locals())" in code
    assert "ag__.converted_call(abs, x)" in code
    assert _run(fn, -3) == 4


def test_liveness_sees_reads_after_and_in_the_next_iteration():
    fn = _fn("""
def f(n):
    a = 0
    b = 0
    while n > 0:
        t = n
        a = a + t
        b = n
        n -= 1
    return a
""")
    loop = fn.body[2]
    changed = analysis.writes(loop.body)
    assert changed == {"t", "a", "b", "n"}
    assert analysis.reads_before_writes(loop.body) == {"n", "a"}
    assert analysis.live_after(fn, loop, changed) == {"a"}


def test_a_definite_write_kills_a_read_after():
    fn = _fn("def f(x):\n    if x:\n        y = 1\n    y = 2\n    return y")
    assert analysis.live_after(fn, fn.body[0], {"y"}) == set()
    fn = _fn("def f(x):\n    if x:\n        y = 1\n    if x:\n        y = 2\n    return y")
    assert analysis.live_after(fn, fn.body[0], {"y"}) == {"y"}


NAMES_SOURCE = '''
def outer(a, b):
    x = a
    def inner(c):
        y = c + b
        class K:
            z = y
        return K
    (w := len(a))
    del b
    import os.path as p, json
    for i, (j, k) in enumerate(a):
        lambda q: q + x
    match a:
        case [first, *rest]:
            pass
        case {"k": v, **others}:
            pass
    return [t for t in a] + [x]
'''


def test_names_keeps_nested_scopes_stores_apart():
    outer = ast.parse(NAMES_SOURCE).body[0]
    assert analysis.writes([outer]) == {"outer"}  # its body's stores are its own
    assert analysis.writes(outer.body) == {
        "x", "inner", "w", "b", "p", "json", "i", "j", "k", "first", "rest", "v", "others"}
    inner = outer.body[1]
    assert analysis.writes(inner.body) == {"y", "K"}
    assert analysis.reads(outer) == {"a", "b", "c", "y", "len", "enumerate", "q", "x", "K",
                                     "t"}
    assert analysis.reads(inner) == {"c", "b", "y", "K"}
