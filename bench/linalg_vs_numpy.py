"""Times em.einsum and em.linalg.inv/solve (compiled, steady state) against numpy on the
same inputs and prints the ratios. A benchmark, not a test: nothing here passes or fails.

    .venv/bin/python bench/linalg_vs_numpy.py
"""

import time

import numpy as np

import ember as em


def _median_ms(fn, *args, repeats=7):
    fn(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return 1e3 * sorted(times)[len(times) // 2]


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 256, 256)).astype(np.float32)
    y = rng.standard_normal((64, 256, 256)).astype(np.float32)
    a = (rng.standard_normal((64, 64)) + 16 * np.eye(64)).astype(np.float64)
    b = rng.standard_normal((64, 8))
    cases = [
        ("einsum bij,bjk->bik 64x256x256 f32",
         em.function(lambda p, q: em.einsum("bij,bjk->bik", p, q)),
         lambda p, q: np.einsum("bij,bjk->bik", p, q), (x, y)),
        ("  (numpy matmul for reference)", None, np.matmul, (x, y)),
        ("inv 64x64 f64", em.function(em.linalg.inv), np.linalg.inv, (a,)),
        ("solve 64x64 (8 rhs) f64", em.function(em.linalg.solve), np.linalg.solve, (a, b)),
    ]
    print(f"{'case':40s} {'ember ms':>10s} {'numpy ms':>10s} {'ember/numpy':>12s}")
    for name, ember_fn, numpy_fn, args in cases:
        t_np = _median_ms(numpy_fn, *args)
        if ember_fn is None:
            print(f"{name:40s} {'':>10s} {t_np:10.2f}")
            continue
        t_em = _median_ms(ember_fn, *args)
        np.testing.assert_allclose(np.asarray(ember_fn(*args)), numpy_fn(*args), rtol=1e-3,
                                   atol=1e-3)
        print(f"{name:40s} {t_em:10.2f} {t_np:10.2f} {t_em / t_np:12.2f}")


if __name__ == "__main__":
    main()
