"""A region traced into a detached op (a branch, a loop body, a trial trace) that is dropped
may outlive the module whose values its ops use: when tracing it fails, or a trial trace is
done, and a garbage cycle holding both is cleared module first. MLIR then aborted the
process ("operation destroyed but still has uses"; a later compile's bytecode writer failed
an assertion on the trial's uses). frontend/detached.py cuts those uses first.

Each script holds the blocks traced into (what a late-cleared cycle does), drops the
function and its module, then the blocks; it runs in a subprocess so an abort fails the test
instead of the run."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

SCRIPT = """
import gc, sys
import ember as em
from ember.frontend import tracing

held = []
region = tracing.FuncGraph.region


def holding(self, block, *args, **kwargs):
    held.append(block)
    return region(self, block, *args, **kwargs)


tracing.FuncGraph.region = holding


def make():
    @em.function
    def f(x):
{body}
    return f


f = make()
try:
    print("result", f(em.ones([2])).numpy())
except ValueError as e:
    print("error", e)
del f
gc.collect()
held.clear()
gc.collect()
print("done")
"""

BODIES = {
    "failing cond branch": """
        def branch():
            em.reduce_sum(x * 2.0 + x)
            raise ValueError("boom")
        return em.cond(em.reduce_sum(x) > 0, branch, lambda: x)
    """,
    "failing while body": """
        def body(i, v):
            v * 2.0 + x
            raise ValueError("boom")
        return em.while_loop(lambda i, v: i < 3, body, (em.constant(0), x))[1]
    """,
    "failing cond inside a while body": """
        def body(i, v):
            def branch():
                v * 2.0 + x
                raise ValueError("boom")
            return i + 1, em.cond(em.reduce_sum(v) > 0, branch, lambda: v)
        return em.while_loop(lambda i, v: i < 3, body, (em.constant(0), x))[1]
    """,
    "map_fn's trial trace": """
        return em.map_fn(lambda row: row * 2.0 + x[0], x)
    """,
    "AutoGraph loop's trial trace": """
        n = em.cast(em.reduce_sum(x), em.int32)
        ta = em.TensorArray(em.float32, size=0, dynamic_size=True)
        for i in em.range(n):
            ta = ta.write(i, x * 2.0 + x[0])
        return ta.stack()[0]
    """,
}


@pytest.mark.parametrize("case", sorted(BODIES))
def test_a_dropped_region_outliving_its_module_does_not_abort(tmp_path, case):
    body = textwrap.indent(textwrap.dedent(BODIES[case]).strip("\n"), " " * 8)
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(body=body))
    old = time.time() - 3600  # AutoGraph converts files it may cache: not a racy new one
    os.utime(script, (old, old))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "EMBER_CACHE_DISABLE": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "done"
    first = done.stdout.splitlines()[0]
    assert first.startswith("error boom" if "failing" in case else "result"), done.stdout
