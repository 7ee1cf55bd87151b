"""100 random programs with em.nn's window ops (max_pool, avg_pool2d, depthwise_conv2d,
conv1d, conv2d_transpose) mixed into program_gen's statements, eager vs compiled, checked
as test_fuzz.py's random programs (program_fuzz.run_one): no crash, hang, internal error or
disagreement. Its own generator class and seeds leave test_fuzz.py's programs unchanged."""

import pool
import program_fuzz
import program_gen
from test_fuzz import SCALE, TIMEOUT_S, WORKERS, _check, _record, out_dir  # noqa: F401

PROGRAMS = 100 * SCALE


class NNGen(program_gen.Gen):
    """program_gen's statement kinds plus `nn`, listed three times (others once or twice)."""

    KINDS = program_gen.Gen.KINDS + ("nn",) * 3


def test_random_nn_programs_compiled_agree_with_eager(out_dir):  # noqa: F811
    inputs = [{"seed": seed, "source": program_gen.generate(seed, NNGen)}
              for seed in range(4_000_000, 4_000_000 + PROGRAMS)]
    assert sum("em.nn." in item["source"] for item in inputs) > PROGRAMS // 2
    report = pool.run("program_fuzz:run_one", inputs, workers=WORKERS, timeout_s=TIMEOUT_S,
                      out_dir=out_dir / "nn_programs", describe=program_fuzz.describe,
                      size=lambda item: len(item["source"]),
                      env={"EMBER_CACHE_DIR": str(out_dir / "cache")})
    _record(report, out_dir, "random_nn_programs")
    _check(report, PROGRAMS)
