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

import os
import pathlib
import random
import re
import stat
import subprocess

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
    return _module(pad, seed)


def count_ops(text: str) -> int:
    """The ops nested in the module that `text` holds (functions and terminators included)."""
    with make_context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        return sum(1 for _ in iter_ops(module.operation))
