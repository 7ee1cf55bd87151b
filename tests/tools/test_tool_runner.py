"""tool_runner.run's zygote (tool_zygote.py) gives what executing the tool gives: the same
exit status, stdout and stderr; a signal as a negative status; a timeout as
subprocess.TimeoutExpired; the run's environment, directory and stdin."""

from __future__ import annotations

import os
import subprocess

import pytest

import tool_runner

VALID = (b'func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
         b'  %0 = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n'
         b'  return %0 : tensor<4xf32>\n}\n')

RUNS = {
    "opt_valid": ("ember-opt", ["{in}", "-p", "ember-cse"], VALID, None),
    "opt_truncated": ("ember-opt", ["{in}"], VALID[:40], None),
    "opt_stdin": ("ember-opt", ["-"], None, VALID),
    "opt_unknown_option": ("ember-opt", ["{in}", "--no-such-option"], VALID, None),
    "opt_help": ("ember-opt", ["--help"], None, None),
    "compile_linalg": ("ember-compile", ["{in}", "--emit=linalg"], VALID, None),
    "compile_obj": ("ember-compile", ["{in}", "--emit=obj", "-o", "{dir}/out.o"], VALID, None),
    "compile_not_utf8": ("ember-compile", ["{in}"], b"// \xff\n" + VALID, None),
    "compile_missing_input": ("ember-compile", ["{dir}/nope.mlir"], None, None),
}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_the_zygote_gives_what_executing_the_tool_gives(name, tmp_path, monkeypatch):
    tool, args, text, stdin = RUNS[name]
    if text is not None:
        (tmp_path / "in.mlir").write_bytes(text)
    args = [a.format(dir=tmp_path, **{"in": tmp_path / "in.mlir"}) for a in args]
    written = tmp_path / "out.o"

    def run(runner: str) -> tuple:
        monkeypatch.setenv("EMBER_TOOL_RUNNER", runner)
        result = tool_runner.run(tool, args, stdin=stdin)
        output = written.read_bytes() if written.exists() else b""
        written.unlink(missing_ok=True)
        return result.returncode, result.stdout, result.stderr, output

    forked = run("zygote")
    assert forked == run("exec")
    assert any(forked[1:])  # each run says or writes something


FAKE_TOOL = '''
import os, signal, sys, time

def main():
    what = sys.argv[1]
    if what == "abort":
        os.kill(os.getpid(), signal.SIGABRT)
    if what == "sleep":
        time.sleep(60)
    if what == "exit":
        raise SystemExit(int(sys.argv[2]))
    sys.stdout.write(f"{os.getcwd()}|{os.environ.get('FAKE_VAR')}|{sys.stdin.read()}")
    sys.stderr.write(" ".join(sys.argv[1:]))
    return 0
'''


@pytest.fixture
def fake(tmp_path):
    (tmp_path / "fake_tool.py").write_text(FAKE_TOOL)
    script = tmp_path / "fake-tool"  # its folder is the zygote's sys.path[0]
    script.write_text("")
    zygote = tool_runner._Zygote(str(script), "fake_tool:main", dict(os.environ))
    yield lambda *args, **kw: zygote.run([str(script), *args], kw.get("stdin"),
                                         kw.get("env", dict(os.environ)))
    zygote.close()


def test_a_run_takes_its_environment_directory_streams_and_argv(fake, tmp_path,
                                                                monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    result = fake("echo", "a b", stdin=b"input text", env={"FAKE_VAR": "seen"})
    assert (result.returncode, result.stdout, result.stderr) == \
        (0, f"{work}|seen|input text".encode(), b"echo a b")
    assert fake("echo").stdout == f"{work}|None|".encode()  # no stdin: /dev/null


def test_a_signal_is_a_negative_status_and_the_next_run_goes_on(fake):
    assert fake("abort").returncode == -6
    assert fake("exit", "3").returncode == 3
    assert fake("echo").returncode == 0


def test_a_run_past_the_timeout_is_killed_and_raises(fake, monkeypatch):
    monkeypatch.setattr(tool_runner, "TIMEOUT_S", 1)
    with pytest.raises(subprocess.TimeoutExpired):
        fake("sleep")
    assert fake("exit", "4").returncode == 4
