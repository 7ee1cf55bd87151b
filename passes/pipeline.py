"""Pipelines of ember and upstream passes, run inside MLIR's PassManager.

    builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize,ember-inline)

The text is parsed by pipeline_syntax.py. Each ember pass becomes a Python pass of one
PassManager (`PassManager.add(callable, name=...)`) between the upstream elements, so a
single run interleaves them and MLIR's own instrumentation sees every pass: the verifier
after each pass, IR printing (`print_ir_after_all`) and the timing report. An ember pass
nested under `func.func(...)` runs in a PassManager anchored on `func.func`, on each
function of the module in turn (what MLIR's nested pass managers do; the bindings cannot
nest a Python pass in a textual pipeline). Ember-specific checks run inside the same
PassManager: the ember verifier after each ember pass (`verify_each`); MLIR's verifier
before upstream passes (they assume valid IR, and this build's assertions abort on invalid
IR): after every pass with `verify_each`, else before each run of upstream elements; and,
before an upstream bufferization, the check that every tensor can become a memref. Each
ember pass's counters (`Statistics`) and wall time are collected in the `PipelineReport`, with
the warnings and remarks the passes emitted (an error fails its pass): passes/diagnostics.py.
"""

from __future__ import annotations

import contextvars
import dataclasses
import sys
import time
from typing import Callable, Sequence, TextIO

from mlir import ir, passmanager

from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import full_context
from ember.dialects.ember.parsing import split_top_level
from ember.passes import bisect_limit, diagnostics, reproducer
from ember.passes.base import Pass, Statistics
from ember.passes.instrument import PassInstrumentation
from ember.passes.printing import PrintIR
from ember.passes.timing import PassTiming
from ember.passes.bufferizable import PassFailure, check_bufferizable
from ember.passes.pipeline_syntax import (Nest, PipelineError, Upstream,
                                          load_dependent_dialects, make_pass, parse,
                                          pass_names, spelling, suggest, walk)

__all__ = ["PassFailure", "Pipeline", "PipelineError", "PipelineReport", "check_bufferizable",
           "make_pass", "run_nested", "run_pipeline", "suggest"]


@dataclasses.dataclass
class PipelineReport:
    statistics: list = dataclasses.field(default_factory=list)  # per ember pass run
    timings: list = dataclasses.field(default_factory=list)  # (ember pass, seconds)
    # warnings and remarks the passes emitted, located (passes/diagnostics.py)
    diagnostics: list = dataclasses.field(default_factory=list)

    def format_statistics(self) -> str:
        lines = []
        for stats in self.statistics:
            if stats.counts:
                lines.append(f"{stats.pass_name}:")
                lines += [f"  {k}: {v}" for k, v in sorted(stats.counts.items())]
        return "\n".join(lines) + ("\n" if lines else "")


class Pipeline:
    """A parsed pipeline: ember passes, upstream elements and nested pipelines."""

    def __init__(self, steps: list):
        self.steps = steps

    @classmethod
    def parse(cls, text: str) -> "Pipeline":
        """Parses a textual pipeline; raises PipelineError naming the bad token."""
        return cls(parse(text))

    def is_builtin(self) -> bool:
        """Whether every step is an upstream pass or one of Ember's own (whose code the
        compile cache's key covers), i.e. no user-registered pass."""
        return all(isinstance(s, (Upstream, Nest)) or type(s).__module__.startswith("ember.")
                   for s in walk(self.steps))

    def __str__(self) -> str:
        return f"builtin.module({spelling(self.steps)})"

    def run(self, module: ir.Module, *, verify_each: bool = True,
            print_ir_after_all: bool = False, print_ir_after: tuple = (),
            timing: bool = False, stream: TextIO | None = None,
            printer: Callable | None = None,
            print_options: dict | None = None,
            instruments: Sequence[PassInstrumentation] = (),
            statistics: bool = False) -> "PipelineReport":
        """Runs the pipeline on `module` in place, in one PassManager run.

        `print_ir_after_all` and `timing` are MLIR's instrumentation (to stderr), with
        `print_options` (`print_generic_op_form`, `enable_debug_info`); `print_ir_after`
        names passes after which `printer(module)` is written to `stream`; `instruments`
        (instrument.py) are called around every pass, the passes an ember pass runs through
        `run_nested` included, and `run_after_pipeline` once it succeeded; `statistics`
        is MLIR's statistics report of the upstream passes (to stderr; those nested under
        an ember pass's `func.func(...)` are left out: that manager runs once per function;
        with instruments, one report per upstream element). With `timing`, the passes an
        ember pass runs through `run_nested` get a report of their own (timing.py).
        """
        printing = dict(print_options or {}) if print_ir_after_all else None
        instruments = tuple(instruments)
        if print_ir_after:
            instruments += (PrintIR(after=print_ir_after, module_scope=True, stream=stream,
                                    printer=printer or str),)
        if printing is not None and instruments:  # see _Run.manager
            instruments = (PrintIR(after=[s.name for s in walk(self.steps)
                                          if isinstance(s, Pass)], module_scope=True,
                                   print_options=printing),) + instruments
        run = _Run(verify_each, module, printing, timing, instruments, statistics,
                   PassTiming() if timing else None)
        full_context(module.context)  # (passes build ops of any dialect: all are loaded)
        with module.context, diagnostics.collect(module.context) as found:
            if print_ir_after_all:  # MLIR requires single-threaded IR printing
                module.context.enable_multithreading(False)
            pm = run.manager("builtin.module", self.steps)
            copy = reproducer.snapshot(module)  # for a reproducer, should the run fail
            if statistics and any(isinstance(s, Upstream) for s in walk(self.steps)):
                pm.enable_statistics()  # (ember passes' counters are in the report)
            active = _ACTIVE.set(run)
            try:
                if self.steps and isinstance(self.steps[0], Upstream):
                    _verified(self.steps[0].text)(module.operation, None)
                run.run(pm, module.operation)
            except ir.MLIRError as e:
                failure = found.attach(_failure(f"pipeline '{self}' failed", e))
                run.failed(failure)
                raise self._reproduced(failure, copy, module.context) from None
            except PassFailure as e:  # with the warnings emitted before it
                failure = found.attach(e)
                run.failed(failure)
                error = self._reproduced(failure, copy, module.context)
                raise error from error.__cause__  # (a user's pass: what it raised, for
                # EMBER_DEBUG=1's traceback)
            except Exception as e:
                run.failed(e)
                raise self._reproduced(e, copy, module.context) from None
            finally:
                _ACTIVE.reset(active)
            del pm  # MLIR prints its timing report when the PassManager goes
        run.report.diagnostics = found.diagnostics
        for instrument in run.hooks:
            instrument.run_after_pipeline(module.operation)
        return run.report

    def _reproduced(self, error: Exception, copy, context: ir.Context) -> Exception:
        """`error` with the path and command of its reproducer (reproducer.py): in the
        message of a PassFailure (its `reproducer` attribute too), else in a note."""
        found = None if copy is None else reproducer.for_failure(
            lambda m, step: Pipeline.parse(step).run(m), self.steps, copy, context)
        if found is None:
            return error
        path, command = found
        if type(error) is PassFailure:
            cause = error.__cause__
            error = PassFailure(f"{error}\nreproducer: {path}\nrun: {command}",
                                error.diagnostics)
            error.__cause__ = cause
        else:
            error.add_note(f"reproducer: {path}\nrun: {command}")
        error.reproducer, error.reproducer_command = path, command
        return error


@dataclasses.dataclass
class _Run:
    """Builds the PassManagers of one run and the Python passes in them."""
    verify_each: bool
    module: ir.Module
    printing: dict | None  # MLIR's IR printing after every pass, with these options
    timing: bool
    instruments: tuple = ()
    statistics: bool = False  # MLIR's statistics, in the managers of `_wrapped` too
    timer: PassTiming | None = None  # the time of passes run_nested runs (--timing)
    report: PipelineReport = dataclasses.field(default_factory=PipelineReport)
    running: list = dataclasses.field(default_factory=list)  # (name, op, start) per open pass
    pending: BaseException | None = None  # what a Python pass raised (_add)

    def manager(self, anchor: str, steps: list) -> passmanager.PassManager:
        """A PassManager on `anchor` ops running `steps`, instrumented as asked (each
        nested one too: MLIR reports its passes on the ops it runs on). With instruments,
        each upstream element runs in a PassManager of its own (`_wrapped`), which prints
        after it, and a PrintIR (Pipeline.run) prints after the ember passes as MLIR
        would."""
        pm = passmanager.PassManager(anchor)
        pm.enable_verifier(self.verify_each)
        if self.printing is not None and not self.instruments:
            pm.enable_ir_printing(print_after_all=True, print_module_scope=True,
                                  **self.printing)
        if self.timing:
            pm.enable_timing()
        for i, step in enumerate(steps):
            if isinstance(step, Upstream):
                if i and not self.verify_each:  # (MLIR's verifier ran after the step before)
                    self._add(pm, _verified(step.text), "ember-verify")
                if any(name.endswith("bufferize") for name in pass_names(step.text)):
                    self._add(pm, lambda op, _: check_bufferizable(self.module),
                              "ember-check-bufferizable")
                if anchor != "builtin.module":  # runs inside the pass of its Nest
                    load_dependent_dialects(self.module.context, anchor, step.text)
                self._upstream(pm, step.text, anchor)
            elif isinstance(step, Nest):
                self._add(pm, self._nested(step), step.anchor)
            else:
                self._add(pm, self._ember(step), step.name)
        return pm

    def _add(self, pm: passmanager.PassManager, run: Callable, name: str) -> None:
        """Adds Python pass `run` to `pm`. What it raises is kept in `pending` and the pass
        fails the MLIR way (signal_pass_failure), for Pipeline.run to raise once MLIR has
        unwound: an exception thrown through MLIR's frames skips their cleanup, leaving the
        context marked as running passes for good (the next pass that registers a dialect,
        NVVM's for one, then aborted the process)."""
        def guarded(op: ir.Operation, pass_) -> None:
            try:
                run(op, pass_)
            except BaseException as e:  # noqa: BLE001 - re-raised by Pipeline.run
                if self.pending is None:
                    self.pending = e
                pass_.signal_pass_failure()
        pm.add(guarded, name=name, argument=name)

    def _upstream(self, pm: passmanager.PassManager, text: str, anchor: str) -> None:
        """Adds upstream elements `text`: at once, or one by one between the hooks of the
        instruments (each element is one pass to them), each behind the opt-bisect gate
        when one is open."""
        if not self.instruments and not bisect_limit.active():
            pm.add(text)
            return
        for element in split_top_level(text, "({", ")}"):
            name = element.strip() if "(" in element.split("{", 1)[0] else \
                element.split("{", 1)[0].strip()
            self._add(pm, self._wrapped(anchor, element, name), name)

    def _wrapped(self, anchor: str, element: str, name: str) -> Callable:
        """A pass running upstream `element` between the instruments' hooks, in a
        PassManager of its own (hooks as passes of `pm` would show in MLIR's IR printing
        and timing report); that one prints after the element if printing is on."""
        inner = passmanager.PassManager(anchor)
        inner.enable_verifier(self.verify_each)
        if self.printing is not None:
            inner.enable_ir_printing(print_after_all=True, print_module_scope=True,
                                     **self.printing)
        if self.statistics:
            inner.enable_statistics()
        inner.add(element)
        load_dependent_dialects(self.module.context, anchor, element)

        def run(op: ir.Operation, _) -> None:
            if not bisect_limit.should_run(f"{name} on {_described(op)}"):
                return
            self.before(name, op)
            inner.run(op)
            self.after(op, None)
        return run

    def run(self, pm: passmanager.PassManager, op: ir.Operation) -> None:
        """`pm.run(op)`, raising what a Python pass in it raised, if one did."""
        try:
            pm.run(op)
        except ir.MLIRError:
            if self.pending is None:
                raise
        if self.pending is not None:
            pending, self.pending = self.pending, None
            raise pending

    @property
    def hooks(self) -> tuple:
        return self.instruments + ((self.timer,) if self.timer else ())

    def before(self, name: str, op: ir.Operation) -> None:
        for instrument in self.hooks:
            instrument.run_before_pass(name, op)
        self.running.append((name, op, time.perf_counter()))

    def after(self, op: ir.Operation, stats: Statistics | None) -> float:
        name, _, start = self.running.pop()
        seconds = time.perf_counter() - start
        for instrument in self.hooks:
            instrument.run_after_pass(name, op, seconds, stats)
        return seconds

    def failed(self, error: BaseException) -> None:
        """Tells the instruments that the innermost running pass failed with `error`."""
        if self.running:
            name, op, _ = self.running[-1]
            self.running.clear()
            for instrument in self.hooks:
                instrument.run_after_pass_failed(name, op, error)

    def _ember(self, step: Pass) -> Callable:
        def run(op: ir.Operation, _) -> None:
            if not bisect_limit.should_run(f"{step.name} on {_described(op)}"):
                return
            stats = Statistics(step.name)
            self.before(step.name, op)
            # a pass at the top level gets the ir.Module (its `body`), as Pass.apply gives
            target = self.module if op == self.module.operation else op
            found = diagnostics.active()
            mark = len(found.diagnostics)
            # passes build IR freely; what they emit through MLIR is collected, not left to
            # the bindings (an error they keep for a run that succeeds aborts this build)
            with ir.Location.unknown(), diagnostics.collect(op.context, into=found):
                _run_pass(step, target, stats)
            if found.errors_after(mark):
                errors = found.errors_after(mark)
                raise PassFailure(f"{step.name} failed: " + "; ".join(d.message for d in errors),
                                  errors)
            if self.verify_each:
                _verify(op, step.name)
            self.report.timings.append((step.name, self.after(op, stats)))
            self.report.statistics.append(stats)
        return run

    def _nested(self, nest: Nest) -> Callable:
        inner = self.manager(nest.anchor, nest.steps)

        def run(op: ir.Operation, _) -> None:
            for region in op.regions:
                for block in region.blocks:
                    for child in list(block.operations):
                        if child.operation.name == nest.anchor:
                            inner.run(child.operation)
        return run


def _described(op: ir.Operation) -> str:
    """`builtin.module`, or `func.func (@f)`: what a pass runs on, as opt-bisect says it."""
    if "sym_name" in op.attributes:
        return f"{op.name} (@{ir.StringAttr(op.attributes['sym_name']).value})"
    return op.name


def _verified(text: str) -> Callable:
    def verify(op: ir.Operation, _) -> None:
        try:
            op.verify()
        except ir.MLIRError as e:
            raise _failure(f"the IR is invalid before upstream pipeline '{text}'", e) from None
    return verify


def _failure(what: str, error: ir.MLIRError) -> PassFailure:
    found = [verifier.Diagnostic.at(d.location, d.message) for d in error.error_diagnostics]
    return PassFailure(f"{what}: " + "; ".join(d.message for d in found), found)


def _verify(op: ir.Operation, label: str) -> None:
    try:
        verifier.check(op)
    except verifier.VerificationError as e:
        found = [dataclasses.replace(d, message=f"{d.message} (after {label})")
                 for d in e.diagnostics]
        raise PassFailure(f"the IR is invalid after {label}:\n{e}", found) from None


_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("ember_pipeline_run", default=None)


def run_nested(step: Pass, target) -> Statistics:
    """Runs ember pass `step` on `target` (a module or a func.func) from inside the pass
    now running, as an MLIR pass runs a nested pipeline (`runPipeline`): the instruments of
    the pipeline run see it as a pass between the outer pass's hooks (so printing, timing
    and reports show it); outside a pipeline run it is `step.apply(target)`."""
    run = _ACTIVE.get()
    if run is None:
        return step.apply(target)
    op = target.operation
    stats = Statistics(step.name)
    if not bisect_limit.should_run(f"{step.name} on {_described(op)}"):
        return stats
    run.before(step.name, op)
    with ir.Location.unknown():
        _run_pass(step, target, stats)
    run.after(op, stats)
    return stats


def _run_pass(step: Pass, target, stats: Statistics) -> None:
    """`step.run(target, stats)`; an exception of a user's pass (not Ember's own, whose
    exceptions are bugs in Ember) becomes a PassFailure naming the pass."""
    if type(step).__module__.startswith("ember."):
        step.run(target, stats)
        return
    try:
        step.run(target, stats)
    except (PassFailure, KeyboardInterrupt):
        raise
    except Exception as e:  # noqa: BLE001 - the user's code, reported as theirs
        where = f"{type(step).__module__}.{type(step).__qualname__}"
        raise PassFailure(f"pass {step.name} ({where}) raised {type(e).__name__}: {e}; "
                          f"rerun with EMBER_DEBUG=1 for its traceback") from e


def run_pipeline(module: ir.Module, text: str, **options) -> PipelineReport:
    """Parses `text` and runs it on `module` (see Pipeline.run for options)."""
    return Pipeline.parse(text).run(module, **options)
