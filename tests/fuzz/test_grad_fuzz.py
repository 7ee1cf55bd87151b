"""Random gradient programs, eager vs compiled (grad_gen.py, grad_fuzz.py): a forward
program of ops_gen/program_gen/control flow under a GradientTape (Variables, persistent
tapes, second order, staged if/while/for), its outputs and gradients compared, in pool.py's
worker subprocesses: no crash, hang, internal error or disagreement. A gradient through an
op with no rule must raise NoGradientError in both modes (an expected error)."""

import collections

import grad_fuzz
import grad_gen
import pool
from test_fuzz import SCALE, TIMEOUT_S, WORKERS, _check, _record, out_dir  # noqa: F401

PROGRAMS = 25 * SCALE  # every kind of grad_gen.KINDS occurs (3-10 of each); 100 took 66 s


def test_random_gradient_programs_compiled_agree_with_eager(out_dir):  # noqa: F811
    inputs = grad_fuzz.generate(PROGRAMS, seed=5_000_000)
    kinds = collections.Counter(grad_fuzz.kind(item) for item in inputs)
    assert set(kinds) == set(grad_gen.KINDS), kinds
    print(f"\nprogram kinds: {dict(kinds)}")
    report = pool.run("grad_fuzz:run_one", inputs, workers=WORKERS, timeout_s=TIMEOUT_S,
                      out_dir=out_dir / "gradients", describe=grad_fuzz.describe,
                      size=lambda item: len(item["source"]),
                      env={"EMBER_CACHE_DIR": str(out_dir / "cache")})
    _record(report, out_dir, "gradient_programs")
    _check(report, PROGRAMS)
    assert report.counts.get(pool.OK, 0) > PROGRAMS // 2, report.summary()
