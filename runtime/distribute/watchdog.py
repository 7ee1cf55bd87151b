"""The multi-worker watchdog: a dead or frozen worker makes the others fail with a clear
error within a timeout instead of hanging in an MPI collective.

MPI collectives block and MPICH's shared-memory transport does not notice a peer that died or
stopped, so `collective_mpi` waits on non-blocking collectives and asks the watchdog, while it
polls, whether every peer is still alive. Liveness comes from heartbeats: a daemon thread
sends each peer a small message every `interval` seconds on a communicator of its own, saying
where its worker is (running, or waiting in collective #k, or at exit). A peer silent for
`timeout` seconds is dead or frozen (SIGKILL, SIGSTOP, a crash); a peer waiting in a
different collective than this worker for `timeout` seconds can never meet it (the workers'
collectives do not match, or it has left). Either raises `UnavailableError` (TensorFlow's
error for an unreachable peer) naming the peer, what this worker waited for, what the peer
last reported, and the timeout setting.

The timeout: `EMBER_DISTRIBUTE_TIMEOUT` (seconds), else the strategy's
`CommunicationOptions(timeout_seconds=...)`, else 60 s. Until the workers first meet (the
strategy's creation) a peer gets at least 60 s, so a short timeout does not fail a slow start.
"""

from __future__ import annotations

import glob
import os
import threading
import time

import numpy as np

from ember.dialects.ember.errors import EmberError

DEFAULT_TIMEOUT = 60.0
TIMEOUT_ENV = "EMBER_DISTRIBUTE_TIMEOUT"
_TAG = 0x6EB  # the heartbeat's message tag, on the heartbeat's own communicator

# What a worker reports it is doing (the heartbeat's second number).
RUNNING, WAITING, EXITING = 0, 1, 2


class UnavailableError(EmberError, RuntimeError):
    """A peer worker is dead, frozen or cannot meet this one (tf.errors.UnavailableError):
    raised by a multi-worker collective after the watchdog's timeout."""


def timeout_seconds(option=None) -> float:
    """The watchdog timeout: EMBER_DISTRIBUTE_TIMEOUT, else `option`, else 60 s."""
    text = os.environ.get(TIMEOUT_ENV)
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not value > 0 or value == float("inf"):
            raise ValueError(f"{TIMEOUT_ENV}={text!r}: the multi-worker watchdog timeout must "
                             "be a positive number of seconds, e.g. 60")
        return value
    return DEFAULT_TIMEOUT if option is None else float(option)


def describe(state) -> str:
    """A peer's last report (collective number, what) in words."""
    number, what = int(state[0]), int(state[1])
    if what == WAITING:
        return f"waiting in collective #{number}"
    if what == EXITING:
        return f"at exit, after collective #{number}"
    return f"running, after collective #{number}"


class Heartbeat:
    """Heartbeats to and from every peer of `comm` (a daemon thread), and the check a
    waiting collective makes (`check`)."""

    def __init__(self, comm, timeout: float):
        self.comm = comm.Dup()  # its own communicator: never matched with the collectives
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.timeout = timeout
        self.interval = min(1.0, timeout / 10)
        self.peers = [p for p in range(self.size) if p != self.rank]
        self.state = np.zeros(2, np.int64)  # ours: [collective number, RUNNING|WAITING|EXITING]
        now = time.monotonic()
        self.last_seen = {p: now for p in self.peers}
        self.reported = {p: None for p in self.peers}  # the peer's last state, None: none yet
        self.mismatch_since: dict[int, float] = {}
        self.failures: dict[int, str] = {}  # peer -> the MPI error its messages gave
        self.peer_failure_signalled = False  # mpiexec said a worker failed (SIGUSR1)
        self.started = False  # every peer has met this worker once (the start's barrier)
        self._recv_bufs = {p: np.zeros(2, np.int64) for p in self.peers}
        self._send_bufs = {p: np.zeros(2, np.int64) for p in self.peers}
        self._recvs = {p: self._irecv(p) for p in self.peers}
        self._sends = {p: None for p in self.peers}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="ember-mpi-heartbeat",
                                        daemon=True)
        if self.peers:
            self.beat()
            self._thread.start()

    def _irecv(self, peer):
        return self.comm.Irecv(self._recv_bufs[peer], source=peer, tag=_TAG)

    def set_state(self, number: int, what: int) -> None:
        """Records what this worker does now (the next heartbeat tells the peers)."""
        with self._lock:
            self.state[:] = (number, what)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.beat()

    def beat(self) -> None:
        """Sends our state to each peer whose previous message has left, and reads theirs."""
        from mpi4py import MPI
        with self._lock:
            for p in self.peers:
                if p in self.failures:
                    continue
                try:
                    send = self._sends[p]
                    if send is None or send.Test():
                        self._send_bufs[p][:] = self.state
                        self._sends[p] = self.comm.Isend(self._send_bufs[p], dest=p, tag=_TAG)
                    while self._recvs[p].Test():
                        self.last_seen[p] = time.monotonic()
                        self.reported[p] = tuple(int(v) for v in self._recv_bufs[p])
                        self._recvs[p] = self._irecv(p)
                except MPI.Exception as err:
                    self.failures[p] = err.Get_error_string()

    def check(self, waiting_for: str, number: int) -> None:
        """Raises UnavailableError if a peer failed, fell silent for the timeout, or has
        waited elsewhere than collective `number` (what this worker waits in) as long."""
        self.beat()  # messages queued while this thread held nothing count as heard
        now = time.monotonic()
        for p in self.peers:
            report = self.reported[p]
            if p in self.failures:
                self._fail(p, waiting_for, f"its messages failed: {self.failures[p]}")
            silent = now - self.last_seen[p]
            # Before the workers first meet, a peer may still be importing: it gets the
            # default time.
            if silent > (self.timeout if self.started else max(self.timeout, DEFAULT_TIMEOUT)):
                last = "it has not started (did it create the strategy?)" if not self.started \
                    else f"it last reported {describe(report)}" if report is not None \
                    else "it last reported nothing, since the workers started"
                self._fail(p, waiting_for, f"it sent no heartbeat for {silent:.1f} s: it is "
                                           f"dead or frozen ({last})")
            exiting = self.state[1] == EXITING
            elsewhere = report is not None and (
                (report[1] == WAITING and (report[0] != number or exiting))
                or (report[1] == EXITING and not exiting))
            if not elsewhere:
                self.mismatch_since.pop(p, None)
                continue
            since = self.mismatch_since.setdefault(p, now)
            if now - since > self.timeout:
                self._fail(p, waiting_for, f"for {now - since:.1f} s it has been "
                                           f"{describe(report)}, so it cannot meet this "
                                           "worker (the workers' collectives do not match)")

    def _fail(self, peer: int, waiting_for: str, why: str):
        if self.peer_failure_signalled:
            why += "; mpiexec reported that a worker process ended"
        raise UnavailableError(
            f"MultiWorkerMirroredStrategy: worker {self.rank} of {self.size} waited in "
            f"{waiting_for} for worker {peer} (MPI rank {peer}), but {why}. The watchdog "
            f"timeout is {self.timeout:g} s (set {TIMEOUT_ENV}, or communication_options="
            "em.distribute.experimental.CommunicationOptions(timeout_seconds=...)).")

    def stop(self) -> None:
        """Stops the thread and cancels the receives still posted (before MPI_Finalize)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        with self._lock:
            for p in self.peers:
                if p not in self.failures:
                    self._recvs[p].Cancel()
                    self._recvs[p].Wait()


def shared_memory_files() -> list[str]:
    """The MPICH shared-memory files this process has mapped (/dev/shm/mpich_shm_*)."""
    try:
        with open("/proc/self/maps") as maps:
            found = {line.split(None, 5)[-1].strip() for line in maps if "/dev/shm/" in line}
    except OSError:
        return []
    return sorted(f for f in found if os.path.basename(f).startswith("mpich_shm_"))


def remove_files(paths) -> None:
    """Unlinks `paths`, quietly (a peer may have removed them first)."""
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def leftover_shared_memory(before: set[str]) -> list[str]:
    """MPICH shared-memory files created since `before` (a set of paths) that no process
    has open or mapped any more: what a crashed or aborted job leaves in /dev/shm."""
    new = set(glob.glob("/dev/shm/mpich_shm_*")) - before
    if not new:
        return []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/maps") as maps:
                new -= {line.split(None, 5)[-1].strip() for line in maps}
            new -= {os.path.realpath(f"/proc/{pid}/fd/{fd}")
                    for fd in os.listdir(f"/proc/{pid}/fd")}
        except OSError:
            continue
    return sorted(new)
