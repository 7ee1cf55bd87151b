"""Shared pytest set-up: a run where no test passed (all skipped, none collected) fails."""

import os
import tempfile

import pytest

# Compiled code of test runs goes to a fresh cache, not the user's ~/.cache/ember.
os.environ.setdefault("EMBER_CACHE_DIR", tempfile.mkdtemp(prefix="ember-test-cache-"))
# Tier 0 (runtime/tier0.py) would run most first calls on the interpreter, the reference the
# compiled code is tested against: the tests compile first calls (its own tests turn it on).
os.environ.setdefault("EMBER_TIER0", "off")

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


def pytest_collection_modifyitems(config, items):
    """Tests marked `gpu` skip, saying why, when this process finds no usable GPU (no
    cuda-bindings, no NVIDIA driver, or no device); `pytest -m gpu` selects them."""
    gpu = [item for item in items if "gpu" in item.keywords]
    if not gpu:
        return
    from ember.backends.cuda.driver import available
    if available():
        return
    skip = pytest.mark.skip(reason="needs an NVIDIA GPU and the CUDA driver (none found)")
    for item in gpu:
        item.add_marker(skip)
