"""Helpers of the multi-worker tests: launching workers as CI does and requiring MPI."""

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).parent


def require_mpi() -> str:
    """The wheel's mpiexec; fails (not skips) without it: CI installs the mpi extra."""
    from ember.distribute import launch
    try:
        return launch.mpiexec_path()
    except Exception as err:
        pytest.fail(f"the multi-worker tests need MPI: {err} (make venv installs it)")


def launch(n: int, script: str, *args, env=None, timeout=90) -> subprocess.CompletedProcess:
    """Runs tests/distribute/`script` on `n` workers through `python -m
    ember.distribute.launch`; a hang fails the test (TimeoutExpired)."""
    return subprocess.run([sys.executable, "-m", "ember.distribute.launch", "-n", str(n),
                           str(HERE / script), *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env={**os.environ, **(env or {})})
