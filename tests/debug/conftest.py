"""The planted (test-only) passes of planted_pass.py, registered for one test and then
unregistered (tests/passes/test_registry.py checks only Ember's own passes)."""

import importlib
import sys

import pytest

from ember.passes import registry


@pytest.fixture
def planted():
    sys.modules.pop("planted_pass", None)
    module = importlib.import_module("planted_pass")
    yield module
    for name in (module.NAME, module.FAIL_NAME):
        registry.PASSES.pop(name, None)
        registry._CLASSES.pop(name, None)
    sys.modules.pop("planted_pass", None)


@pytest.fixture
def repro_dir(tmp_path, monkeypatch):
    """Reproducers go to a fresh directory (EMBER_REPRO_DIR, inherited by subprocesses)."""
    monkeypatch.setenv("EMBER_REPRO_DIR", str(tmp_path / "repro"))
    return tmp_path / "repro"
