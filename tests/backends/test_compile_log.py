"""EMBER_LOG=compile and the live status line (backends/compile_log.py), and the per-pass IR
dumps of EMBER_DUMP_DIR (backends/dumps.py)."""

import io
import logging
import os
import pathlib
import pty
import re
import select
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np

import ember as em
from ember.backends import compile_log


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_every_compile_step_is_logged_with_its_path(monkeypatch, caplog):
    monkeypatch.setenv("EMBER_CACHE_DISABLE", "1")
    caplog.set_level(logging.INFO, logger="ember.compile")

    @em.function
    def logged(x):
        return em.exp(x) * 3.0 - 1.0

    logged(np.ones(3, np.float32))
    steps = [r.getMessage().rsplit(": ", 1)[0] for r in caplog.records
             if r.name == "ember.compile"]
    for step in ("trace logged", "compile @logged > optimize logged > ember-optimize",
                 "compile @logged > optimize logged > ember-optimize > ember-cse",
                 "compile @logged > linalg > convert-ember-to-linalg",
                 "compile @logged > linalg", "compile @logged > bufferized > one-shot-bufferize",
                 "compile @logged > llvm", "compile @logged > llvmir",
                 "compile @logged > llvm-optimize", "compile @logged > emit-object",
                 "compile @logged > load", "compile @logged"):
        assert step in steps, step
    assert steps[-1] == "compile @logged"
    assert all(r.getMessage().endswith(" ms") for r in caplog.records)


def test_ember_log_sends_the_log_to_stderr(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import numpy as np
        import ember as em

        @em.function
        def f(x):
            return x + 1.0

        f(np.ones(2, np.float32))
        """))
    env = dict(os.environ, EMBER_LOG="compile", EMBER_CACHE_DISABLE="1")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ember.compile: trace f: " in done.stderr
    assert "ember.compile: compile @f > emit-object: " in done.stderr
    assert "ember.compile" not in done.stdout and "RuntimeWarning" not in done.stderr
    # a misspelt log name is said, not ignored
    env["EMBER_LOG"] = "compiles"
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "EMBER_LOG='compiles': Ember has no log named compiles; the logs are: compile" \
        in done.stderr and "ember.compile: trace" not in done.stderr


def test_failed_step_is_logged_as_failed(caplog):
    caplog.set_level(logging.INFO, logger="ember.compile")
    try:
        with compile_log.stage("outer"), compile_log.stage("inner"):
            raise KeyError("x")
    except KeyError:
        pass
    messages = [r.getMessage() for r in caplog.records]
    assert messages[0].startswith("outer > inner: failed after ")
    assert messages[1].startswith("outer: failed after ")


def test_status_line_appears_after_the_threshold_and_is_cleared():
    terminal = FakeTerminal()
    with compile_log.stage("compile @f", stream=terminal, threshold=0.05):
        with compile_log.stage("llvm-optimize"):
            time.sleep(0.4)
    text = terminal.getvalue()
    assert text.startswith("\rember: compile @f > llvm-optimize  0.")
    assert text.count("\r") >= 3  # updated in place
    last = text.rsplit("\r", 2)
    assert last[-1] == "" and last[-2].strip() == ""  # the line is blanked at the end
    assert "\n" not in text


def test_no_status_line_for_a_fast_step_or_without_a_terminal():
    terminal = FakeTerminal()
    with compile_log.stage("compile @f", stream=terminal, threshold=5):
        time.sleep(0.05)
    assert terminal.getvalue() == ""
    pipe = io.StringIO()  # not a terminal: no thread, nothing written
    with compile_log.stage("compile @f", stream=pipe, threshold=0.01):
        time.sleep(0.1)
    assert pipe.getvalue() == ""


def test_one_thread_writes_the_status_lines_of_every_step():
    """A thread per step cost each step on a terminal ~0.2 ms: one watcher serves them all,
    steps running at once on two threads each get their own line."""
    terminals = [FakeTerminal(), FakeTerminal()]

    def step(terminal, seconds):
        with compile_log.stage("compile @f", stream=terminal, threshold=0.05):
            time.sleep(seconds)
    step(FakeTerminal(), 0)
    watcher = compile_log._Watcher._process
    for _ in range(5):
        step(FakeTerminal(), 0)
    assert compile_log._Watcher._process is watcher  # made by the first, kept
    threads = [threading.Thread(target=step, args=(t, 0.4)) for t in terminals]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert compile_log._Watcher._process is watcher is not None
    for terminal in terminals:
        text = terminal.getvalue()
        assert text.startswith("\rember: compile @f  0.") and text.count("\r") >= 3, text
        assert text.endswith("\r") and text.rsplit("\r", 2)[-2].strip() == ""


def test_status_line_on_a_pseudo_terminal(tmp_path):
    """Real compiles with stderr on a pty (threshold lowered to 10 ms): the status names
    the step and pass, and the line is cleared before the program's next output."""
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import re
        import sys
        import numpy as np
        import ember as em
        from ember.backends import compile_log
        compile_log.THRESHOLD = 0.01
        compile_log.INTERVAL = 0.01

        # the status thread writes only when the compiling thread is in Python, not in a
        # long MLIR call: compile a shape at a time until it has written a nested step
        nested = []
        write = compile_log.Status._write
        def _write(self):
            nested.append(re.match(r"ember: compile @f(_\\d+)? > ", self.text) is not None)
            write(self)
        compile_log.Status._write = _write

        @em.function
        def f(x):
            return em.tanh(x) * 2.0

        for n in range(2, 200):
            f(np.ones(n, np.float32))
            if any(nested):
                break
        sys.stderr.write("DONE\\n")
        """))
    master, slave = pty.openpty()
    # compiled on the calling thread (the fast tier), not by tier 0's background thread
    env = dict(os.environ, EMBER_CACHE_DISABLE="1", EMBER_TIER="fast")
    env.pop("EMBER_LOG", None)
    proc = subprocess.Popen([sys.executable, str(script)], env=env, stderr=slave,
                            stdout=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    text = b"".join(chunks).decode()
    assert proc.returncode == 0, text
    # a nested step of a compile of f: each new shape is a new trace, @f_1, @f_2, ...
    assert re.search(r"\rember: compile @f(_\d+)? > ", text), text
    before_done = text.split("DONE")[0]
    assert before_done.rstrip(" ").endswith("\r")  # the last status line was blanked


def test_dump_dir_has_every_pass_and_stage(monkeypatch, tmp_path):
    monkeypatch.setenv("EMBER_CACHE_DISABLE", "1")
    monkeypatch.setenv("EMBER_DUMP_DIR", str(tmp_path))

    @em.function
    def dumped(x):
        return em.sin(x) + em.sin(x)

    dumped(np.ones(5, np.float32))
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["dumped-1", "dumped-compile-1"]
    optimized = sorted(p.name for p in (tmp_path / "dumped-1").iterdir())
    assert optimized[0] == "00-traced.mlir" and optimized[-1].endswith("-ember-optimize.mlir")
    assert "03-ember-cse.mlir" in optimized
    traced = (tmp_path / "dumped-1" / "00-traced.mlir").read_text()
    assert traced.count('"ember.sin"') == 2
    after_cse = (tmp_path / "dumped-1" / "03-ember-cse.mlir").read_text()
    assert after_cse.count('"ember.sin"') == 1
    compiled = sorted(p.name for p in (tmp_path / "dumped-compile-1").iterdir())
    assert compiled[0] == "00-input.mlir" and compiled[-1].endswith("-llvmir.ll")
    stages = [name.split("-", 1)[1] for name in compiled]
    for stage in ("convert-ember-to-linalg.mlir", "linalg.mlir", "one-shot-bufferize.mlir",
                  "bufferized.mlir", "reconcile-unrealized-casts.mlir", "llvm.mlir"):
        assert stage in stages, stage
    assert stages.index("linalg.mlir") < stages.index("bufferized.mlir") < \
        stages.index("llvm.mlir") < stages.index("llvmir.ll")
    assert "define " in pathlib.Path(tmp_path / "dumped-compile-1" / compiled[-1]).read_text()
    dumped(np.ones(5, np.float32))  # a call the compiled code answers writes nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == folders
