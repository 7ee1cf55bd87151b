"""Collectives across worker processes over MPI (mpi4py on MPICH), for
`MultiWorkerMirroredStrategy`: one `Allreduce` per process on numpy buffers (and the
broadcast of worker 0's initial values and the all-gather of `gather`), each waited for as a
non-blocking collective (`Iallreduce`, `Ibcast`, `Iallgatherv`) polled under the watchdog
(`watchdog.Heartbeat`), so a dead or frozen peer raises `UnavailableError` instead of
hanging.

The process's exit is guarded too, since MPI would otherwise hang or leave peers waiting:
an unhandled exception prints its traceback and aborts the whole job (`MPI_Abort`, as
`python -m mpi4py` does), so every worker ends; a normal exit first meets the other workers
(under the watchdog) so no worker enters `MPI_Finalize` while a peer may still need it; after
a watchdog error the job is aborted. Aborting removes this job's MPICH shared-memory files,
which a killed job would leave in /dev/shm.
"""

from __future__ import annotations

import atexit
import signal
import sys
import threading
import time
import zlib

import numpy as np

from ember.runtime.distribute import watchdog
from ember.runtime.distribute.watchdog import EXITING, RUNNING, WAITING, UnavailableError

INSTALL_HINT = "pip install 'ember[mpi]'"
# Poll holding the GIL for _BUSY_SECONDS (a small all-reduce takes microseconds; a yield
# under load can cost a time slice), then yield it between polls up to _SPIN_SECONDS (MPICH
# moves large messages only while polled, as its blocking calls do), then sleep 1 ms
# between polls (a slow peer, e.g. compiling).
_BUSY_SECONDS, _SPIN_SECONDS = 1e-3, 1.0
_POOL_MIN_BYTES, _POOL_PER_SHAPE = 1 << 20, 2
# The dtypes MPI sums itself (mpi4py maps them to MPI's types).
_MPI_SUMS = {np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                                   np.uint32, np.uint64, np.float32, np.float64,
                                   np.complex64, np.complex128)}
# The collectives checked against each other (Collective._check_same), in words.
_PHRASES = {"all-reduce": "an all-reduce (reduce, all_reduce, apply_gradients)",
            "broadcast": "a broadcast (a variable's initial value from worker 0)",
            "all-gather": "an all-gather (gather)"}
_FORWARD_SECONDS = 0.5  # time for hydra to pass on a failing worker's last output
_world = None
_world_lock = threading.Lock()


def import_mpi():
    """mpi4py's MPI module (initialises MPI), or ImportError saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ImportError("MultiWorkerMirroredStrategy needs MPI (mpi4py and MPICH), which "
                          f"is not installed: {INSTALL_HINT}") from err
    return MPI


def world(timeout: float) -> "Collective":
    """The process's collective over every MPI worker (one per process, made once: the
    first strategy's timeout holds)."""
    global _world
    with _world_lock:
        if _world is None:
            _world = Collective(import_mpi(), timeout)
        return _world


class Collective:
    """All-reduce and barrier across the MPI workers of COMM_WORLD, under the watchdog."""

    def __init__(self, MPI, timeout: float):
        self.MPI = MPI
        self.comm = MPI.COMM_WORLD.Dup()
        self.comm.Set_errhandler(MPI.ERRORS_RETURN)  # MPI failures raise, never abort
        self.exit_comm = self.comm.Dup()  # the exit's barrier never matches a collective
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.timeout = timeout
        self.count = 0  # collectives entered; the same sequence on every worker
        self.broken: UnavailableError | None = None
        self.shm_files = watchdog.shared_memory_files()
        self.heartbeat = watchdog.Heartbeat(self.comm, timeout)
        self._lock = threading.Lock()  # one collective at a time in this process
        self._pool: dict[tuple, list[np.ndarray]] = {}  # reusable result buffers
        self._keep_on_peer_failure()
        self._hook = sys.excepthook
        sys.excepthook = self._excepthook
        atexit.register(self._at_exit)  # after mpi4py's: runs before MPI_Finalize
        self.barrier("the workers' start (MultiWorkerMirroredStrategy())")
        self.heartbeat.started = True

    # -- collectives ---------------------------------------------------------------------

    def all_reduce_sum(self, array: np.ndarray, what: str) -> np.ndarray:
        """The elementwise sum of `array` over the workers (each must pass the same dtype
        and shape, checked first: a mismatch raises ValueError on every worker). The result
        may be a pooled buffer, reused once nothing refers to it: treat it as read-only."""
        array = np.require(array, requirements="C")  # (ascontiguousarray makes 0-d 1-d)
        self._check_same(array, what)
        if array.dtype in _MPI_SUMS:
            return self._sum(array, what)
        if array.dtype.kind == "b":  # SUM of bools is OR, as MirroredStrategy's
            return self._sum(array.astype(np.int32), what) != 0
        if array.dtype.kind in "fV" and array.dtype.itemsize == 2:  # float16, bfloat16
            return self._sum(array.astype(np.float32), what).astype(array.dtype)
        raise TypeError(f"{what}: cannot all-reduce values of dtype {array.dtype} across "
                        "workers: only numbers and bools can be summed")

    def _sum(self, array: np.ndarray, what: str) -> np.ndarray:
        if self.size == 1:
            return array.copy()
        with self._lock:
            out = self._buffer(array.dtype, array.shape)
            self._wait(lambda: self.comm.Iallreduce(array, out, op=self.MPI.SUM), what)
        return out

    def _buffer(self, dtype, shape) -> np.ndarray:
        """A result buffer: a pooled one no result refers to any more (for large arrays,
        whose fresh pages would cost as much as the all-reduce), else a new one."""
        size = int(np.prod(shape)) * dtype.itemsize
        if size < _POOL_MIN_BYTES:
            return np.empty(shape, dtype)
        pool = self._pool.setdefault((dtype.str, tuple(shape)), [])
        for buffer in pool:
            if sys.getrefcount(buffer) <= 3:  # the pool's, the loop's and the call's
                return buffer
        buffer = np.empty(shape, dtype)
        if len(pool) < _POOL_PER_SHAPE:
            pool.append(buffer)
        return buffer

    def barrier(self, what: str) -> None:
        if self.size > 1:
            with self._lock:
                self._wait(self.comm.Ibarrier, what)

    def broadcast(self, array: np.ndarray, what: str, describe: str) -> np.ndarray:
        """Worker 0's `array` on every worker (each must pass the same dtype and shape,
        checked first; `describe` says what the value is in the mismatch error)."""
        array = np.require(array, requirements="C")
        if array.dtype.kind == "O":
            raise TypeError(f"{what}: cannot broadcast Python objects across workers")
        self._check_same(array, what, "broadcast", describe)
        if self.size == 1:
            return array
        out = array.copy()
        with self._lock:
            self._wait(lambda: self.comm.Ibcast(out.reshape(-1).view(np.uint8), root=0), what)
        return out

    def all_gather(self, array: np.ndarray, axis: int, what: str) -> np.ndarray:
        """Every worker's `array` concatenated along `axis`, worker by worker (their sizes
        along `axis` may differ; the other dimensions and the dtype must agree)."""
        array = np.require(array, requirements="C")
        if array.dtype.kind == "O":
            raise TypeError(f"{what}: cannot gather Python objects across workers")
        if self.size == 1:
            return array.copy()
        moved = np.ascontiguousarray(np.moveaxis(array, axis, 0))
        self._check_same(moved[:0], what, "all-gather")  # the shape apart from `axis`
        sizes = np.empty(self.size, np.int64)
        mine = np.array([moved.shape[0]], np.int64)
        with self._lock:
            self._wait(lambda: self.comm.Iallgather(mine, sizes), f"{what}, sizes")
        row = int(np.prod(moved.shape[1:], dtype=np.int64)) * moved.dtype.itemsize
        out = np.empty((int(sizes.sum()),) + moved.shape[1:], moved.dtype)
        counts = [int(n) * row for n in sizes]
        displacements = [sum(counts[:r]) for r in range(self.size)]
        with self._lock:
            self._wait(lambda: self.comm.Iallgatherv(
                moved.reshape(-1).view(np.uint8),
                [out.reshape(-1).view(np.uint8), counts, displacements, self.MPI.BYTE]), what)
        return np.moveaxis(out, 0, axis)

    _KINDS = {"all-reduce": 0, "broadcast": 1, "all-gather": 2}

    def _check_same(self, array: np.ndarray, what: str, kind: str = "all-reduce",
                    describe: str = "") -> None:
        """Every worker makes the same kind of collective on the same dtype and shape
        (ValueError on every worker otherwise)."""
        if self.size == 1:
            return
        key = f"{array.dtype.str}{list(array.shape)}"
        mine = np.array([self._KINDS[kind], zlib.crc32(key.encode())], np.int64)
        keys = np.empty((self.size, 2), np.int64)
        with self._lock:
            self._wait(lambda: self.comm.Iallgather(mine, keys), f"{what}, comparing shapes")
        other = [int(r) for r in np.flatnonzero(keys[:, 0] != mine[0])]
        if other:
            kinds = {v: _PHRASES[k] for k, v in self._KINDS.items()}
            theirs = sorted({kinds[int(k)] for k in keys[other, 0]})
            raise ValueError(f"{what}: worker {self.rank} is in {_PHRASES[kind]} while "
                             f"worker(s) {other} are in {' or '.join(theirs)}: every "
                             "worker must make the same collective calls (reduce, gather, "
                             "variables created under the strategy) in the same order")
        differ = [int(r) for r in np.flatnonzero(keys[:, 1] != mine[1])]
        if not differ:
            return
        if kind == "broadcast":
            raise ValueError(f"{what}: worker {self.rank} creates {describe} as a "
                             f"{array.dtype} value of shape {list(array.shape)}, and worker(s)"
                             f" {differ} with another dtype or shape: every worker must "
                             "create the same variables, with the same dtypes and shapes, in "
                             "the same order")
        if kind == "all-gather":
            raise ValueError(f"{what}: worker {self.rank} passes {array.dtype} values of "
                             f"shape {list(array.shape[1:])} apart from the gathered axis, "
                             f"and worker(s) {differ} values of another dtype or shape: the "
                             "workers' values must agree in dtype and in every other axis")
        raise ValueError(f"{what}: worker {self.rank} passes a {array.dtype} value of "
                         f"shape {list(array.shape)}, and worker(s) {differ} a value of "
                         "another dtype or shape: every worker must all-reduce values of "
                         "the same dtype and shape, in the same order")

    def _wait(self, start, what: str) -> None:
        """Starts a non-blocking collective and polls it to completion, the watchdog
        checking the peers meanwhile."""
        if self.broken is not None:
            raise UnavailableError(f"{what}: the workers can no longer communicate, after "
                                   f"an earlier error: {self.broken}")
        self.count += 1
        number, beat = self.count, self.heartbeat
        where = f"{what} (collective #{number})"
        beat.set_state(number, EXITING if beat.state[1] == EXITING else WAITING)
        try:
            request = start()
            began = time.monotonic()
            next_check = began + beat.interval / 4
            while not request.Test():
                now = time.monotonic()
                if now >= next_check:
                    beat.check(where, number)
                    next_check = now + beat.interval / 4
                if now - began > _BUSY_SECONDS:  # let other threads have the GIL
                    time.sleep(0 if now - began < _SPIN_SECONDS else 0.001)
        except self.MPI.Exception as err:
            self.broken = UnavailableError(f"MultiWorkerMirroredStrategy: worker {self.rank}"
                                           f" of {self.size}: {where} failed in MPI: "
                                           f"{err.Get_error_string()}")
            raise self.broken from None
        except UnavailableError as err:
            self.broken = err
            raise
        if beat.state[1] != EXITING:
            beat.set_state(number, RUNNING)

    def _keep_on_peer_failure(self) -> None:
        """Hydra (with -disable-auto-cleanup) signals SIGUSR1 to the workers when one dies;
        its default action would end this one before the watchdog can say which died."""
        if signal.getsignal(signal.SIGUSR1) is not signal.SIG_DFL \
                or threading.current_thread() is not threading.main_thread():
            return

        def noted(signum, frame):
            self.heartbeat.peer_failure_signalled = True
        signal.signal(signal.SIGUSR1, noted)

    # -- exit ----------------------------------------------------------------------------

    def abort(self, code: int = 1) -> None:
        """Ends every worker of the job (mpiexec returns), removing the shared memory."""
        sys.stdout.flush()
        sys.stderr.flush()
        watchdog.remove_files(self.shm_files)
        time.sleep(_FORWARD_SECONDS)  # mpiexec forwards what was printed before it kills
        self.MPI.COMM_WORLD.Abort(code)

    def _excepthook(self, kind, value, traceback) -> None:
        self._hook(kind, value, traceback)
        if self.size > 1:
            self.abort(1)

    def _at_exit(self) -> None:
        if self.broken is None:
            self.heartbeat.state[1] = EXITING
            try:
                with self._lock:
                    self._wait(self.exit_comm.Ibarrier,
                               "the workers' exit (each waits for the others to finish)")
            except (UnavailableError, ValueError) as err:
                print(f"{type(err).__name__}: {err}", file=sys.stderr)
        if self.broken is not None:
            self.abort(1)
        self.heartbeat.stop()
