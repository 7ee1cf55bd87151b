"""Results of dynamic shape over one allocation (`y` and `reshape(y)`: compiled code returns
two views of one buffer): each array stays valid until the last one goes, and the buffer
is freed once, through the JIT and through an ahead-of-time library (both loaders).

Each case runs in a subprocess with glibc's MALLOC_PERTURB_ (freed memory is overwritten,
so a read after free shows as wrong values) and MALLOC_CHECK_ (a double free aborts),
so a crash fails the test instead of the test run."""

import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import gc, sys
    import numpy as np
    import ember as em

    def results(y, m):
        return {
            "reshape": (y, em.reshape(y, [-1])),
            "slice": (y, y[1:]),
            "same": (y, y),
            "two_views": (em.reshape(y, [-1]), em.reshape(y, [1, -1])),
            "strided": (y, em.transpose(y)),
        }[m]

    def build(kind):
        @em.function(input_signature=[em.TensorSpec([None, 4], em.float32),
                                      em.TensorSpec([None], em.bool)])
        def f(x, keep):
            return results(em.boolean_mask(x, keep) * 1.5, kind)
        return f

    def check(call, kind, x, keep):
        want = [np.asarray(w) for w in results(np.asarray(x)[keep] * np.float32(1.5), kind)]
        for first in (0, 1):  # drop each result first in turn
            got = [np.array(np.asarray(g)) for g in call(x, keep)]
            outs = list(call(x, keep))
            del outs[first]
            gc.collect()
            junk = [np.full(16, -7.0, np.float32) for _ in range(2000)]
            rest = np.asarray(outs[0])
            assert np.array_equal(rest, want[1 - first]), (kind, first, rest, want[1 - first])
            assert all(np.array_equal(g, w) for g, w in zip(got, want)), kind
            del outs, rest, junk
            gc.collect()

    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    keep = np.array([True, False, True])
    where = sys.argv[1]
    for kind in ("reshape", "slice", "same", "two_views", "strided"):
        f = build(kind)
        if where == "jit":
            check(lambda a, b: tuple(t.numpy() for t in f(a, b)), kind, x, keep)
            continue
        out = sys.argv[2] + "/" + kind
        em.aot.compile(f, out_dir=out, name="alias")
        if where == "aot":
            check(em.aot.load(out), kind, x, keep)
        else:  # the numpy-only loader shipped with the library
            sys.path.insert(0, out)
            import ember_aot_loader
            check(ember_aot_loader.load(out), kind, x, keep)
            sys.path.remove(out)
            del sys.modules["ember_aot_loader"]
    print("ok")
""")


@pytest.mark.parametrize("where", ["jit", "aot", "aot_loader"])
def test_results_over_one_buffer_stay_valid_and_are_freed_once(where, tmp_path):
    script = tmp_path / "alias.py"
    script.write_text(PROGRAM)
    env = dict(os.environ, MALLOC_PERTURB_="165", MALLOC_CHECK_="3")
    done = subprocess.run([sys.executable, str(script), where, str(tmp_path)], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), \
        (done.returncode, done.stdout[-2000:], done.stderr[-3000:])
