"""`python -m ember.distribute.launch -n N [--timeout S] script.py [args...]`: starts N
workers of `script.py` on this machine for `em.distribute.MultiWorkerMirroredStrategy`.

A thin wrapper over the `mpiexec` (MPICH's hydra) of the `ember[mpi]` extra: it runs
`mpiexec -n N -launcher fork -disable-auto-cleanup python script.py args...` (each worker
under `sh`, see `command`). Hydra's own clean-up would kill every worker the moment one
dies, before any could say why; instead the strategy's watchdog makes the others fail with
`em.errors.UnavailableError` naming the dead or frozen worker, and abort the job.
`--timeout` sets that watchdog's timeout (EMBER_DISTRIBUTE_TIMEOUT). Afterwards it removes
the MPICH shared-memory files a crashed job leaves in /dev/shm, and exits with mpiexec's
status. For several machines, run the wheel's `mpiexec` with its `-hosts` option directly.
"""

from __future__ import annotations

import argparse
import glob
import importlib.metadata
import os
import signal
import subprocess
import sys

from ember.runtime.distribute import watchdog

INSTALL_HINT = "pip install 'ember[mpi]'"


class _LaunchError(Exception):
    """A launch that cannot start (no MPI, no script): its message is for the user."""


def mpiexec_path() -> str:
    """The `mpiexec` of the installed `mpich` wheel (the extra `ember[mpi]`)."""
    try:
        files = importlib.metadata.distribution("mpich").files or []
    except importlib.metadata.PackageNotFoundError:
        files = []
    for name in ("mpiexec.hydra", "mpiexec"):
        for file in files:
            path = str(file.locate())
            if file.name == name and os.access(path, os.X_OK):
                return os.path.realpath(path)
    raise _LaunchError("MPI is not installed (the mpich wheel's mpiexec was not found), so "
                      f"no workers can be started: {INSTALL_HINT}")


def command(num_workers: int, script: str, args: list[str]) -> list[str]:
    """The mpiexec command line that starts the workers. Each runs under `sh`, which turns
    a worker killed by a signal into an exit status (128 + the signal): hydra ends every
    other worker (SIGKILL, even with -disable-auto-cleanup) when one is killed by a signal,
    before their watchdogs could say which one it was. The SIGUSR1 hydra sends the others
    when a worker ends (even normally) is ignored: its default action would end them."""
    return [mpiexec_path(), "-n", str(num_workers), "-launcher", "fork",
            "-disable-auto-cleanup", "/bin/sh", "-c", 'trap "" USR1; "$@"; exit $?',
            "ember-worker", sys.executable, script, *args]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ember.distribute.launch",
        description="Starts N workers of a script for em.distribute."
                    "MultiWorkerMirroredStrategy (mpiexec from the ember[mpi] extra).")
    parser.add_argument("-n", "--num-workers", type=int, required=True,
                        help="how many worker processes to start")
    parser.add_argument("--timeout", type=float, default=None,
                        help="the watchdog timeout in seconds (EMBER_DISTRIBUTE_TIMEOUT; "
                             "default 60)")
    parser.add_argument("script", help="the Python script every worker runs")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's arguments")
    return parser


def main(argv=None) -> int:
    parser = _parser()
    options = parser.parse_args(argv)
    if options.num_workers < 1:
        parser.error(f"-n: the number of workers must be at least 1, got "
                     f"{options.num_workers}")
    if options.timeout is not None and not 0 < options.timeout < float("inf"):
        parser.error(f"--timeout: must be a positive number of seconds, got "
                     f"{options.timeout:g}")
    if not os.path.isfile(options.script):
        parser.error(f"{options.script}: no such script")
    env = dict(os.environ)
    if options.timeout is not None:
        env[watchdog.TIMEOUT_ENV] = f"{options.timeout:g}"
    try:
        argv = command(options.num_workers, options.script, options.args)
    except _LaunchError as err:
        print(f"ember.distribute.launch: {err}", file=sys.stderr)
        return 2
    before = set(glob.glob("/dev/shm/mpich_shm_*"))
    process = subprocess.Popen(argv, env=env)
    # A SIGTERM to the launcher ends the job: mpiexec passes it on to the workers.
    signal.signal(signal.SIGTERM, lambda signum, frame: process.terminate())
    try:
        status = process.wait()
    except KeyboardInterrupt:  # mpiexec got the same Ctrl-C and stops the workers
        status = process.wait()
    leftover = watchdog.leftover_shared_memory(before)
    watchdog.remove_files(leftover)
    if leftover:
        print(f"ember.distribute.launch: removed {len(leftover)} shared-memory file(s) the "
              "workers left in /dev/shm", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
