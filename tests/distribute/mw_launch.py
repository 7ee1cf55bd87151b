"""Helpers of the multi-worker tests: launching workers as CI does and requiring MPI."""

import glob
import os
import pathlib
import signal
import subprocess
import sys
import time

import pytest

from ember.runtime.distribute import watchdog

HERE = pathlib.Path(__file__).parent


def require_mpi() -> str:
    """The wheel's mpiexec; fails (not skips) without it: CI installs the mpi extra."""
    from ember.distribute import launch
    try:
        return launch.mpiexec_path()
    except Exception as err:
        pytest.fail(f"the multi-worker tests need MPI: {err} (make venv installs it)")


def start(n: int, script: str, *args, env=None):
    """Starts tests/distribute/`script` on `n` workers through `python -m
    ember.distribute.launch`, in a session of its own; `finish` waits for it."""
    argv = [sys.executable, "-m", "ember.distribute.launch", "-n", str(n), str(HERE / script),
            *map(str, args)]
    before = set(glob.glob("/dev/shm/mpich_shm_*"))
    job = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, **(env or {})}, start_new_session=True)
    return job, before


def finish(started, timeout=90) -> subprocess.CompletedProcess:
    """The job's outcome. A hang fails the test (TimeoutExpired) after killing the whole
    job (launcher, mpiexec and workers) and removing its /dev/shm files."""
    job, before = started
    with job:
        try:
            out, err = job.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            out, err = job.communicate()
            time.sleep(0.5)  # the killed workers' mappings go
            watchdog.remove_files(watchdog.leftover_shared_memory(before))
            raise subprocess.TimeoutExpired(job.args, timeout, out, err) from None
    return subprocess.CompletedProcess(job.args, job.returncode, out, err)


def launch(n: int, script: str, *args, env=None, timeout=90) -> subprocess.CompletedProcess:
    """`script` on `n` workers, waited for (`start`, then `finish`)."""
    return finish(start(n, script, *args, env=env), timeout)
