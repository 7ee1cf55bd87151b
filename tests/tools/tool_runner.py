"""Running an installed command-line tool in a subprocess and checking how it ended.

A negative exit status means a signal (abort, segfault), "Traceback" an unhandled Python
exception, exit status 2 with "internal error" a bug the tool caught; a failing run must
print `error:` on stderr.

`run` does not exec the console script each time: a process per tool and environment
(tool_zygote.py) imports the script's module once and forks a child per run, which takes
the run's argv, environment, directory and streams and ends as the script would (exit
status, signal, the interpreter's shutdown). That saves the import (~0.3-0.5 s of CPU) in
each of the tool tests' hundreds of runs. EMBER_TOOL_RUNNER=exec runs the executable
instead; test_tool_runner.py checks both give the same results.
"""

from __future__ import annotations

import atexit
import importlib.metadata
import json
import os
import pathlib
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile

TIMEOUT_S = 120
ZYGOTE = pathlib.Path(__file__).with_name("tool_zygote.py")
PER_TEST = ("PYTEST_CURRENT_TEST",)


def executable(name: str) -> str:
    beside = pathlib.Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is not installed: run `make venv` (pip install -e .)"
    return found


def environment(env: dict | None = None) -> dict:
    """The tool's environment: this process's, without EMBER_DEBUG, updated with `env`."""
    result = dict(os.environ)
    result.pop("EMBER_DEBUG", None)  # the tracebacks it enables are what we test against
    result.update(env or {})
    return result


def run(name: str, args: list[str], stdin: bytes | None = None,
        env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs tool `name` with `args` as subprocess.run(capture_output=True) would."""
    command = [executable(name), *args]
    variables = environment(env)
    if os.environ.get("EMBER_TOOL_RUNNER") == "exec":  # else "zygote", the default
        return subprocess.run(command, input=stdin, capture_output=True, timeout=TIMEOUT_S,
                              env=variables)
    return _zygote(name, variables).run(command, stdin, variables)


class _Zygote:
    """One tool_zygote.py process, for one tool and one environment."""

    def __init__(self, script: str, entry: str, variables: dict):
        """`script`: the console script (its folder is sys.path[0]); `entry`: its
        "module:function"."""
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, str(ZYGOTE), script, entry],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=variables, bufsize=0)
        self.pending = b""  # read from the zygote, not yet a whole line
        if self._reply(TIMEOUT_S) is None:
            raise RuntimeError(f"the zygote of {script} did not start: {self._log_tail()}")

    def _log_tail(self) -> str:
        self.log.seek(0)
        return "its stderr ends:\n" + self.log.read().decode(errors="replace")[-3000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def run(self, command: list[str], stdin: bytes | None,
            variables: dict) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix="tool-run-") as folder:
            paths = {s: os.path.join(folder, s) for s in ("stdin", "stdout", "stderr")}
            for stream in ("stdout", "stderr"):
                open(paths[stream], "wb").close()
            if stdin is not None:
                pathlib.Path(paths["stdin"]).write_bytes(stdin)
            request = {"argv": command, "env": variables, "cwd": os.getcwd(),
                       "stdin": paths["stdin"] if stdin is not None else None,
                       "stdout": paths["stdout"], "stderr": paths["stderr"]}
            data = memoryview(json.dumps(request).encode() + b"\n")
            while data:
                data = data[self.proc.stdin.write(data):]
            started = self._reply(TIMEOUT_S)
            if started is None:
                raise RuntimeError(f"the zygote of {command[0]} stopped: {self._log_tail()}")
            pid = started["pid"]
            status = self._reply(TIMEOUT_S)
            if status is None:  # ran too long: killed, as subprocess.run's timeout does
                os.kill(pid, signal.SIGKILL)
                self._reply(TIMEOUT_S)
            else:
                status = status["status"]
            out = pathlib.Path(paths["stdout"]).read_bytes()
            err = pathlib.Path(paths["stderr"]).read_bytes()
        if status is None:
            raise subprocess.TimeoutExpired(command, TIMEOUT_S, out, err)
        return subprocess.CompletedProcess(command, status, out, err)

    def _reply(self, timeout: float) -> dict | None:
        """The zygote's next message; None if none came within `timeout` seconds."""
        while b"\n" not in self.pending:
            with selectors.DefaultSelector() as selector:
                selector.register(self.proc.stdout, selectors.EVENT_READ)
                if not selector.select(timeout):
                    return None
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return json.loads(line)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()
        self.log.close()


_ZYGOTES: dict[tuple, _Zygote] = {}


def _zygote(name: str, variables: dict) -> _Zygote:
    # Keyed by the environment too, which the import may read (the cache folder, logging),
    # but for the variable pytest sets to each test's name (the child gets it).
    key = (name, tuple(sorted((k, v) for k, v in variables.items() if k not in PER_TEST)))
    found = _ZYGOTES.get(key)
    if found is None or not found.alive():
        if found is not None:
            found.close()
        entry, = (e.value for e in importlib.metadata.entry_points(group="console_scripts")
                  if e.name == name)
        found = _ZYGOTES[key] = _Zygote(executable(name), entry, variables)
    return found


@atexit.register
def _close_zygotes() -> None:
    for zygote in _ZYGOTES.values():
        zygote.close()


def check(result: subprocess.CompletedProcess, rc: int, stderr: str = "") -> None:
    out = result.stdout.decode("utf-8", "replace")
    err = result.stderr.decode("utf-8", "replace")
    where = f"\n--- stdout (head) ---\n{out[:2000]}\n--- stderr (head) ---\n{err[:2000]}"
    assert result.returncode >= 0, f"died of signal {-result.returncode}{where}"
    assert "Traceback" not in out + err, f"showed a Python traceback{where}"
    assert "internal error" not in err, f"hit an internal error{where}"
    assert result.returncode == rc, f"exit status {result.returncode}, expected {rc}{where}"
    if rc != 0:
        assert "error:" in err, f"no 'error:' on stderr{where}"
    if stderr:
        assert stderr in err, f"{stderr!r} not on stderr{where}"
