"""`ember-reduce` (tools/ember_reduce.py): shrinking a failing module while a script says so.

The acceptance test of issue 16: a generated 200-op module (three functions, a DAG of
elementwise ops and reductions, a call, an `scf.if`, a dense constant) has one planted op that
`convert-ember-to-linalg` cannot lower (an `ember.mul` with an unranked operand); an
interestingness script in mlir-reduce's style runs `ember-opt` on each candidate and greps its
error. `ember-reduce`, run through its console script in a subprocess, must bring it to at most
10 ops that still fail the same way. Other tests pin the conventions (the script's arguments,
exit statuses) and the errors for bad input.
"""

from __future__ import annotations

import pathlib
import random
import re
import signal
import stat
import subprocess
import time

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import iter_ops
from tool_runner import check, executable, run

T = "tensor<4x8xf32>"
UNARY = ("neg", "exp", "tanh", "abs", "sigmoid")
BINARY = ("add", "mul", "sub", "maximum")
PLANTED_ERROR = "cannot lower 'ember.mul'"


class Body:
    """Random straight-line ember ops over tensor<4x8xf32> values (one op per line)."""

    def __init__(self, rng: random.Random, values: list[str], prefix: str, indent: str = "  "):
        self.rng, self.values, self.prefix, self.indent = rng, list(values), prefix, indent
        self.lines: list[str] = []

    def _name(self) -> str:
        return f"%{self.prefix}{len(self.lines)}"

    def op(self, text: str, usable: bool = True) -> str:
        """Appends `name = text`; `usable`: later ops may take the value (a tensor<4x8xf32>)."""
        name = self._name()
        self.lines.append(f"{self.indent}{name} = {text}")
        if usable:
            self.values.append(name)
        return name

    def unary(self) -> str:
        op, x = self.rng.choice(UNARY), self.rng.choice(self.values[-3:])
        return self.op(f'"ember.{op}"({x}) : ({T}) -> {T}')

    def step(self) -> str:
        """One unary or binary op, or a reduction broadcast back (two ops)."""
        kind, last = self.rng.random(), self.values[-1]
        if kind < 0.35:
            return self.unary()
        if kind < 0.85:
            op, other = self.rng.choice(BINARY), self.rng.choice(self.values)
            return self.op(f'"ember.{op}"({last}, {other}) : ({T}, {T}) -> {T}')
        reduction = self.rng.choice(("reduce_sum", "reduce_max"))
        r = self.op(f'"ember.{reduction}"({last}) {{axes = array<i64: 1>, keepdims = true}} '
                    f': ({T}) -> tensor<4x1xf32>', usable=False)
        return self.op(f'"ember.sub"({last}, {r}) : ({T}, tensor<4x1xf32>) -> {T}')


def _module(pad: int, seed: int) -> str:
    rng = random.Random(seed)
    helper, unused = Body(rng, ["%x"], "h"), Body(rng, ["%x"], "u")
    for _ in range(12):
        helper.step()
        unused.step()
    then = Body(rng, ["%a", "%b"], "t", "    ")
    for _ in range(6):
        then.step()
    main = Body(rng, ["%a", "%b"], "m")
    values = ", ".join(str(v) for v in [1.5, -2.0, 0.25, 3.0] * 8)
    main.op(f'"ember.constant"() {{value = dense<[{values}]> : tensor<32xf32>}} '
            ": () -> tensor<32xf32>", usable=False)
    main.op(f'"ember.reshape"(%m0) {{shape = array<i64: 4, 8>}} : (tensor<32xf32>) -> {T}')
    for _ in range(40):
        main.step()
    main.op(f"func.call @helper({main.values[-1]}) : ({T}) -> {T}")
    cond = main.op("arith.constant true", usable=False)
    main.lines += [f"  %if = scf.if {cond} -> ({T}) {{", *then.lines,
                   f"    scf.yield {then.values[-1]} : {T}", "  } else {",
                   f"    scf.yield {main.values[-2]} : {T}", "  }"]
    main.values.append("%if")
    for _ in range(40):
        main.step()
    main.lines.append(f'  %planted = "ember.mul"({main.values[-1]}, %u) : '
                      f"({T}, tensor<*xf32>) -> tensor<*xf32>")
    for _ in range(pad):
        main.unary()
    return "\n".join([
        f"func.func @helper(%x: {T}) -> {T} {{", *helper.lines,
        f"  return {helper.values[-1]} : {T}", "}",
        f"func.func @unused(%x: {T}) -> {T} {{", *unused.lines,
        f"  return {unused.values[-1]} : {T}", "}",
        f"func.func @main(%a: {T}, %b: {T}, %u: tensor<*xf32>) -> ({T}, tensor<*xf32>) {{",
        *main.lines, f"  return {main.values[-1]}, %planted : {T}, tensor<*xf32>", "}", ""])


def planted_module(ops: int = 200, seed: int = 16) -> str:
    """A module of exactly `ops` ops (functions and terminators included) with one op that
    `convert-ember-to-linalg` cannot lower, about two thirds of the way through @main."""
    pad = 10
    pad += ops - count_ops(_module(pad, seed))
    assert pad >= 0, f"the fixed part of the module has more than {ops} ops"
    return _module(pad, seed)


def count_ops(text: str) -> int:
    """The ops nested in the module that `text` holds (functions and terminators included)."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        return sum(1 for _ in iter_ops(module.operation))


def script(path: pathlib.Path, body: str) -> str:
    """An executable shell script at `path` running `body`; returns its path."""
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def last_arg_greps(pattern: str) -> str:
    """A test body: interesting (exit 1) when the candidate (the last argument) matches."""
    return f'for f; do :; done\ngrep -q -e \'{pattern}\' "$f" && exit 1\nexit 0'


PLANTED_MUL = r'"ember.mul"(.*tensor<\*xf32>) -> tensor<\*xf32>'  # for grep
PLANTED_MUL_RE = r'"ember\.mul"\(.*tensor<\*xf32>\) -> tensor<\*xf32>'


@pytest.mark.slow  # ~25 runs of ember-opt at ~1.3 s each (importing ember)
def test_reduces_a_planted_lowering_failure_in_200_ops_to_at_most_10(tmp_path):
    source = planted_module()
    assert count_ops(source) == 200
    (tmp_path / "in.mlir").write_text(source)
    test = script(tmp_path / "lowering-fails.sh", (
        f'{executable("ember-opt")} "$1" -p convert-ember-to-linalg 2>&1 '
        f'| grep -q "{PLANTED_ERROR}" && exit 1\nexit 0'))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test,
                                  "-o", str(tmp_path / "out.mlir")])
    check(result, 0)
    reduced = (tmp_path / "out.mlir").read_text()
    assert count_ops(reduced) <= 10, reduced
    assert re.search(r"ember-reduce: ops: 200 -> .* -> \d+ \(\d+ tests\)",
                     result.stderr.decode()), result.stderr.decode()
    rerun = run("ember-opt", [str(tmp_path / "out.mlir"), "-p", "convert-ember-to-linalg"])
    check(rerun, 1, PLANTED_ERROR)


def test_reduces_the_planted_module_with_a_grep_test(tmp_path):
    (tmp_path / "in.mlir").write_text(planted_module())
    test = script(tmp_path / "has-mul.sh", last_arg_greps(PLANTED_MUL))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 0)
    reduced = result.stdout.decode()
    assert count_ops(reduced) <= 10, reduced
    assert re.search(PLANTED_MUL_RE, reduced), reduced
    assert "@helper" not in reduced and "@unused" not in reduced and "scf.if" not in reduced


def test_script_gets_its_arguments_then_the_candidate_path_last(tmp_path):
    (tmp_path / "in.mlir").write_text(planted_module())
    log = tmp_path / "argv.log"
    test = script(tmp_path / "log.sh", f'echo "$# $1 $2" >> {log}\n' + last_arg_greps(
        PLANTED_MUL))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test,
                                  "--test-arg", "one", "--test-arg=two words"])
    check(result, 0)
    calls = log.read_text().splitlines()
    assert calls and all(c == "3 one two words" for c in calls), calls
    tests = int(re.search(r"\((\d+) tests\)", result.stderr.decode()).group(1))
    assert tests == len(calls)


def test_any_nonzero_exit_status_is_interesting_as_upstream(tmp_path):
    (tmp_path / "in.mlir").write_text(planted_module())
    test = script(tmp_path / "two.sh", last_arg_greps(PLANTED_MUL).replace("exit 1", "exit 2"))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 0)
    assert count_ops(result.stdout.decode()) <= 10


@pytest.mark.parametrize("body, stderr", [
    ("exit 0", "error: the input is not interesting: '{test}' exited with status 0"),
    ("kill -SEGV $$", "error: the interestingness test '{test}' was killed by SIGSEGV"),
    (None, "error: the interestingness test '{test}' is not an executable file"),
], ids=["boring", "killed", "not-executable"])
def test_a_test_that_cannot_decide_is_an_error(tmp_path, body, stderr):
    (tmp_path / "in.mlir").write_text(planted_module())
    path = tmp_path / "test.sh"
    test = script(path, body) if body else str(path)
    if body is None:
        path.write_text("#!/bin/sh\nexit 1\n")
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 1, stderr.format(test=test))
    assert result.stdout == b""


REGIONS = """
func.func @f(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<4xf32>) {
    %k = "ember.constant"() {value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}
      : () -> tensor<4xf32>
    %w = scf.while (%v = %acc) : (tensor<4xf32>) -> tensor<4xf32> {
      %s = "ember.reduce_sum"(%v) {axes = array<i64: 0>, keepdims = false}
        : (tensor<4xf32>) -> tensor<f32>
      %z = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
      %p = "ember.greater"(%s, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %b = tensor.extract %p[] : tensor<i1>
      scf.condition(%b) %v : tensor<4xf32>
    } do {
    ^bb0(%v: tensor<4xf32>):
      %e = "ember.sub"(%v, %k) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      scf.yield %e : tensor<4xf32>
    }
    %t = "ember.tanh"(%w) : (tensor<4xf32>) -> tensor<4xf32>
    scf.yield %t : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
"""


def test_region_ops_are_inlined_and_constants_splatted(tmp_path):
    (tmp_path / "in.mlir").write_text(REGIONS)
    # the reduce_sum must survive, and so must a 4-element constant (a splat one will do)
    test = script(tmp_path / "test.sh", (
        'for f; do :; done\ngrep -q ember.reduce_sum "$f" && '
        'grep -q "dense<.*tensor<4xf32>" "$f" && exit 1\nexit 0'))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 0)
    reduced = result.stdout.decode()
    assert "scf." not in reduced, reduced
    assert "dense<0.000000e+00> : tensor<4xf32>" in reduced, reduced
    assert count_ops(reduced) == 4, reduced  # func, reduce_sum, constant, return


def test_ctrl_c_writes_the_smallest_interesting_module_so_far(tmp_path):
    (tmp_path / "in.mlir").write_text(planted_module())
    runs = tmp_path / "runs.log"
    test = script(tmp_path / "slow.sh", f"echo run >> {runs}\nsleep 0.2\n" + last_arg_greps(
        PLANTED_MUL))
    out = tmp_path / "out.mlir"
    # SIGINT as a terminal sends it; the default action restored in the child, since a
    # suite started in the background of a shell without job control inherits it ignored
    # (and Python then installs no KeyboardInterrupt handler)
    process = subprocess.Popen([executable("ember-reduce"), str(tmp_path / "in.mlir"),
                                "--test", test, "-o", str(out)], stderr=subprocess.PIPE,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None and (
                not runs.exists() or len(runs.read_text().split()) < 6):
            time.sleep(0.05)  # a few tests in, some reductions kept
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, err.decode()
    assert "interrupted: wrote the smallest interesting module found so far" in err.decode()
    reduced = out.read_text()
    assert re.search(PLANTED_MUL_RE, reduced) and count_ops(reduced) < 200, reduced


@pytest.mark.parametrize("text, stderr", [
    (b"func.func @f(%x: tensor<4xf32>) {\n", "in.mlir:1:34: error:"),
    (b"\xff\xfe\x00garbage", "error: cannot read the input: not valid UTF-8"),
    (b'func.func @f() {\n  "ember.nope"() : () -> ()\n  return\n}\n', "in.mlir:2:3: error:"),
    (None, "error: cannot read '{dir}/in.mlir'"),
], ids=["truncated", "binary", "unknown-op", "missing"])
def test_bad_input_is_a_located_error(tmp_path, text, stderr):
    if text is not None:
        (tmp_path / "in.mlir").write_bytes(text)
    test = script(tmp_path / "test.sh", "exit 1")
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 1, stderr.format(dir=tmp_path))


# scf.condition forwards the before-region's argument: inlining that region once must hand
# the loop's users the init, not the argument (a use of an erased value aborts MLIR).
FORWARDED_ARGUMENT = """
func.func @while_body(%n: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  %r = scf.while (%i = %x) : (tensor<f32>) -> tensor<f32> {
    %l = "ember.less"(%i, %n) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %c = tensor.extract %l[] : tensor<i1>
    scf.condition(%c) %i : tensor<f32>
  } do {
  ^bb0(%j: tensor<f32>):
    %e = "ember.exp"(%x) : (tensor<f32>) -> tensor<f32>
    %m = "ember.mul"(%j, %e) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    scf.yield %m : tensor<f32>
  }
  return %r : tensor<f32>
}
"""


@pytest.mark.parametrize("op", ["ember.mul", "ember.less"])
def test_inlining_a_loop_that_yields_its_argument(tmp_path, op):
    (tmp_path / "in.mlir").write_text(FORWARDED_ARGUMENT)
    test = script(tmp_path / "test.sh", last_arg_greps(op))
    result = run("ember-reduce", [str(tmp_path / "in.mlir"), "--test", test])
    check(result, 0)
    reduced = result.stdout.decode()
    assert op in reduced and "scf.while" not in reduced, reduced
