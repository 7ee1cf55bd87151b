"""Shared pytest set-up: a run where no test passed (all skipped, none collected) fails."""

import os
import tempfile

import pytest

# Compiled code of test runs goes to a fresh cache, not the user's ~/.cache/ember.
os.environ.setdefault("EMBER_CACHE_DIR", tempfile.mkdtemp(prefix="ember-test-cache-"))
# Tier 0 (runtime/tier0.py) would run most first calls on the interpreter, the reference the
# compiled code is tested against: the tests compile first calls (its own tests turn it on).
os.environ.setdefault("EMBER_TIER0", "off")
# A failing test (or a fuzz worker's internal error) shows Ember's frames too: the filter that
# drops them for users (runtime/traceback_filter.py) is tested where it is turned on.
os.environ.setdefault("EMBER_TRACEBACK_FILTERING", "off")

import ember  # noqa: E402

_passed = 0
ember.config.set_pass_verification(True)  # every pass of every trace is verified in tests


def pytest_runtest_logreport(report):
    global _passed
    if report.when == "call" and report.passed:
        _passed += 1


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput"):
        return  # a pytest-xdist worker: the controller, which sees every report, decides
    if exitstatus == 0 and _passed == 0:
        session.exitstatus = 1
        print("\nerror: no test passed (all were skipped or none were collected)")


@pytest.fixture
def context():
    """A fresh MLIR context with the ember dialect loaded (entered for the test)."""
    from mlir import ir

    from ember.dialects.ember.irdl import make_context
    ctx = make_context()
    with ctx, ir.Location.unknown():
        yield ctx


# The longest tests (10-60 s each on a loaded 2-core machine; `make test` with --durations),
# longest first: collected first, so they start at once instead of leaving the other
# workers idle at the end. pytest-xdist's worksteal gives each worker a contiguous share of
# the collection and an idle worker steals from the end of another's share, so these stay
# at the head of the first worker's share while the cheap tests spread over the others.
# A node id here also names every parametrization under it ("...::test_x" takes "[a]").
SLOW_FIRST = (
    "tests/tools/test_ember_reduce.py::test_reduces_a_planted_lowering_failure_in_200_ops",
    "tests/distribute/test_keras_fit_mirrored.py::test_two_replicas_fit_as_one_with_the_same",
    "tests/tools/test_ember_opt_malformed.py::test_malformed_input_is_reported_not_crashed_on"
    "[chain_of_100000_ops]",
    "tests/fuzz/test_fuzz.py::",
    "tests/autodiff/test_gradcheck.py::test_compiled_matches_eager[120]",
    "tests/backends/test_cuda_emulated.py::test_reductions_over_each_axis",
    "tests/backends/test_cuda_matmul.py::test_the_products_nests_compute_numpys_products",
    "tests/autodiff/test_gradcheck.py::test_compiled_matches_eager[132]",
    "tests/test_packaging.py::test_built_wheel_contains_and_imports_every_layer",
    "tests/fuzz/test_nn_fuzz.py::",
    "tests/fuzz/test_grad_fuzz.py::",
    "tests/runtime/test_tier_compilation.py::test_fast_tier_products_use_the_fast_gemm_library",
    "tests/backends/test_gemm_kernels.py::test_small_random_calls_match_the_reference[6-f64",
    "tests/tools/test_ember_compile_malformed.py::test_a_chain_of_5000_ops_compiles",
    "tests/backends/test_print_symbols.py::test_prints_loaded_from_the_disk_cache_print_their",
    "tests/backends/test_outlined_loop_nests.py::test_outlined_nests_compute_what_eager_comp",
    "tests/tools/test_ember_compile_cuda_target.py::test_a_later_stage_read_as_ember_ir_is",
    "tests/aot/test_aot_signatures.py::test_products_of_run_time_sizes_call_embers_gemm",
    "tests/backends/test_warm_shared_code.py::test_a_product_on_embers_kernels_runs_from_the",
    "tests/distribute/test_keras_fit_mirrored.py::test_two_mpi_workers_fit_as_one",
    "tests/autodiff/test_gradcheck.py::test_compiled_with_none_dims_matches_eager[linalg_",
    "tests/tools/test_ir_report_browser.py::test_report_screenshot_shows_every_pass_name",
    "tests/distribute/test_multiworker_training.py::test_two_workers_train_the_digits_mlp",
)


def _slow_rank(nodeid: str) -> int:
    for rank, prefix in enumerate(SLOW_FIRST):
        if nodeid.startswith(prefix):
            return rank
    return len(SLOW_FIRST)


def pytest_collection_modifyitems(config, items):
    """The tests of SLOW_FIRST first (the rest in their order; every worker sorts alike), and
    tests marked `gpu` skip, saying why, when this process finds no usable GPU (no
    cuda-bindings, no NVIDIA driver, or no device); `pytest -m gpu` selects them."""
    items.sort(key=lambda item: _slow_rank(item.nodeid))  # stable: the rest keep their order
    gpu = [item for item in items if "gpu" in item.keywords]
    if not gpu:
        return
    from ember.backends.cuda.driver import available
    if available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and the CUDA driver (none found)")
    for item in gpu:
        item.add_marker(skip)
