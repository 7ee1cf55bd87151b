"""A failing call of an AOT library frees the buffers it had allocated: compiled code
unwinds past the frames that own them (native.py), and the library's C source tracks the
call's allocations and frees them on a failure. Before, every failed assert leaked its
intermediates (~40 KB per call here: 4 GB after 100k calls from C)."""

import numpy as np
import pytest

import ember as em


def _rss_kb() -> int:
    with open("/proc/self/status") as f:
        return int(f.read().split("VmRSS:")[1].split()[0])


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    @em.function(input_signature=[em.TensorSpec([None], em.float32)] * 2)
    def checked(x, y):
        z = em.math.log(x) * 2.0
        em.debugging.assert_all_finite(y, "y not finite")
        return z + y

    out = tmp_path_factory.mktemp("checked")
    em.aot.compile(checked, out_dir=str(out))
    return em.aot.load(str(out))


def test_failing_calls_do_not_grow_memory(checked):
    x, y = np.ones(1 << 18, np.float32), np.zeros(1 << 18, np.float32)  # 1 MiB each
    y[-1] = np.nan
    for _ in range(20):  # warm up: the allocator's own pools
        with pytest.raises(em.errors.InvalidArgumentError, match="y not finite"):
            checked(x, y)
    before = _rss_kb()
    for _ in range(200):  # 200 MiB of intermediates if each call leaked its own
        with pytest.raises(em.errors.InvalidArgumentError, match="y not finite"):
            checked(x, y)
    assert _rss_kb() - before < 32 * 1024


def test_calls_that_succeed_still_return_their_outputs(checked):
    x, y = np.full(5, np.e, np.float32), np.ones(5, np.float32)
    for _ in range(3):
        np.testing.assert_allclose(checked(x, y), np.full(5, 3.0), rtol=1e-6)
