"""The multi-worker watchdog: when one of 2 workers is killed (SIGKILL), frozen (SIGSTOP) or
leaves early mid-run, the other fails with em.errors.UnavailableError naming it, within the
timeout (5 s here, from EMBER_DISTRIBUTE_TIMEOUT), and the job ends: no hang. Plus the
watchdog's settings and the /dev/shm clean-up, in this process."""

import os
import re
import time

import pytest

from ember.runtime.distribute import watchdog
from mw_launch import launch, require_mpi

TIMEOUT = 5


@pytest.fixture(scope="module")
def mpi():
    return require_mpi()


@pytest.mark.parametrize("signal_name, state", [("SIGKILL", "dead"), ("SIGSTOP", "frozen")])
def test_a_lost_worker_makes_the_other_fail_within_the_timeout(mpi, signal_name, state):
    start = time.monotonic()
    done = launch(2, "mw_watchdog_worker.py", signal_name,
                  env={watchdog.TIMEOUT_ENV: str(TIMEOUT)}, timeout=60)
    elapsed = time.monotonic() - start
    assert done.returncode != 0, done.stdout
    assert "finished all steps" not in done.stdout
    pid = int(re.search(r"worker 1 \(pid (\d+)\)", done.stdout).group(1))
    error = re.search(r"UnavailableError: (.*)", done.stderr)
    assert error, done.stderr[-3000:]
    message = error.group(1)
    assert message.startswith("MultiWorkerMirroredStrategy: worker 0 of 2 waited in "
                              "ReplicaContext.all_reduce"), message
    assert "for worker 1 (MPI rank 1)" in message
    assert "it is dead or frozen (it last reported " in message
    assert f"The watchdog timeout is {TIMEOUT} s (set EMBER_DISTRIBUTE_TIMEOUT" in message
    silent = float(re.search(r"no heartbeat for ([\d.]+) s", message).group(1))
    assert TIMEOUT <= silent < TIMEOUT + 2, f"the {state} worker was noticed after {silent} s"
    assert elapsed < 45
    assert _ended(pid), f"worker 1 (pid {pid}, {state}) outlived the job"


def test_a_worker_that_leaves_early_makes_the_other_fail_within_the_timeout(mpi):
    done = launch(2, "mw_watchdog_worker.py", "EXIT", env={watchdog.TIMEOUT_ENV: str(TIMEOUT)},
                  timeout=60)
    assert done.returncode != 0 and "worker 1 (pid" in done.stdout, done.stdout
    # worker 0's error (worker 1, waiting at exit for worker 0, may time out and print first)
    message = re.search(r"UnavailableError: (.*worker 0 of 2.*)", done.stderr).group(1)
    assert "for worker 1 (MPI rank 1), but for " in message
    assert re.search(r"it has been at exit, after collective #\d+, so it cannot meet this "
                     r"worker \(the workers' collectives do not match\)", message), message
    waited = float(re.search(r"but for ([\d.]+) s", message).group(1))
    assert TIMEOUT <= waited < TIMEOUT + 2


def _ended(pid: int, wait: float = 5.0) -> bool:
    """Whether process `pid` is gone or a zombie (killed, not yet reaped), within `wait` s."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] in "ZX":
                    return True
        except FileNotFoundError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def test_the_timeout_setting(monkeypatch):
    monkeypatch.delenv(watchdog.TIMEOUT_ENV, raising=False)
    assert watchdog.timeout_seconds() == 60
    assert watchdog.timeout_seconds(7) == 7
    monkeypatch.setenv(watchdog.TIMEOUT_ENV, "2.5")
    assert watchdog.timeout_seconds(7) == 2.5
    monkeypatch.setenv(watchdog.TIMEOUT_ENV, "soon")
    with pytest.raises(ValueError, match="EMBER_DISTRIBUTE_TIMEOUT='soon': the multi-worker "
                                         "watchdog timeout must be a positive number"):
        watchdog.timeout_seconds()


def test_communication_options_are_checked():
    import ember as em
    options = em.distribute.experimental.CommunicationOptions(timeout_seconds=30)
    assert options.timeout_seconds == 30
    with pytest.raises(ValueError, match="timeout_seconds must be a positive number"):
        em.distribute.experimental.CommunicationOptions(timeout_seconds=0)
    with pytest.raises(ValueError, match="implementation must be CommunicationImplementation"):
        em.distribute.experimental.CommunicationOptions(implementation="NCCL")
    with pytest.raises(ValueError, match="pass cluster_resolver=None"):
        em.distribute.MultiWorkerMirroredStrategy(cluster_resolver="grpc://a:1")


def test_leftover_shared_memory_is_found_only_when_unused():
    path = f"/dev/shm/mpich_shm_embertest_{os.getpid()}"
    before = set()
    with open(path, "w"):
        assert path not in watchdog.leftover_shared_memory(before)  # open here: in use
    try:
        assert path in watchdog.leftover_shared_memory(before)
        assert path not in watchdog.leftover_shared_memory({path})  # older than the run
        watchdog.remove_files([path])
        assert not os.path.exists(path)
    finally:
        watchdog.remove_files([path])
