"""`ember-opt`: the `mlir-opt` of the ember dialect.

Parses a `.mlir` file (ember ops and any upstream dialect), verifies it with MLIR and with the
ember op specs, runs a textual pass pipeline and prints the result:

    ember-opt FILE [-p PIPELINE] [--split-input-file] [--verify-diagnostics]
              [--print-ir-after-all] [--mlir-print-op-generic] [-o OUT]
              [--ir-diff-report=OUT.html] [--emit-dot]
              [--load-pass-plugin=FILE.py] [--run-reproducer] [--opt-bisect-limit=N]
              [--bisect-against-interpreter [--function F] [--inputs random|FILE.npz]]
    ember-opt --list-passes

IR printing as mlir-opt's: `--print-ir-before=PASS`, `--print-ir-before-all`,
`--print-ir-after=PASS`, `--print-ir-after-all`, `--print-ir-after-change`,
`--print-ir-after-failure`, `--print-ir-module-scope` (passes/printing.py); `--timing` and
`--pass-statistics` report MLIR's timing and statistics and Ember's own.

Errors are printed MLIR-style (`file:line:col: error: message`) with exit status 1; a bug
in Ember is one `internal error` line with exit status 2 (tools/driver.py), its traceback
shown only with `--debug` or EMBER_DEBUG=1. Input goes through dialects/ember/parsing.py
before MLIR parses it: text that would crash MLIR's parser (brackets nested deeper than
MAX_NESTING, `array<index>`, shapes whose element count overflows int64, strings that are
not UTF-8) is refused with a located error. When a pipeline fails, a reproducer is written
and its path and command are printed as a note (passes/reproducer.py); the debugging flags
are described in tools/bisect_cli.py.
"""

from __future__ import annotations

import argparse
import sys
import traceback

from mlir import ir

from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.parsing import MAX_NESTING, ParseError, parse_module
from ember.dialects.ember.verifier import Diagnostic
from ember.passes import bisect_limit, reproducer
from ember.passes.pipeline import PassFailure, Pipeline, PipelineError
from ember.tools import bisect_cli
from ember.passes.report import IRDiffRecorder, render_html
from ember.passes.view_op_graph import module_to_dot
from ember.tools import diagnostics as expect
from ember.tools.list_passes import listing
from ember.tools.plugins import load_pass_plugin
from ember.tools.driver import (ToolError, add_instrumentation_flags, debugging,
                                instrumentation, read_input, run_tool, write_output)

__all__ = ["MAX_NESTING", "main"]

SPLIT_MARKER = "// -----"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-opt", description=__doc__.split("\n\n")[1])
    p.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin)")
    p.add_argument("-p", "--pass-pipeline", default="",
                   help="textual pipeline, e.g. 'builtin.module(canonicalize,cse)'")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--split-input-file", action="store_true",
                   help=f"process each chunk between '{SPLIT_MARKER}' lines on its own")
    p.add_argument("--verify-diagnostics", action="store_true",
                   help="check emitted diagnostics against expected-error/... comments")
    add_instrumentation_flags(p)
    p.add_argument("--pass-statistics", "--mlir-pass-statistics", action="store_true",
                   help="report each pass's statistics (to stderr)")
    p.add_argument("--mlir-print-op-generic", action="store_true",
                   help="print operations in generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--allow-unregistered-dialect", action="store_true",
                   help="accept operations of dialects that are not registered")
    bisect_cli.add_flags(p)
    p.add_argument("--ir-diff-report", metavar="OUT.html",
                   help="write one HTML page with the IR after every pass, a side-by-side "
                        "diff of each pass's changes, times and statistics")
    p.add_argument("--emit-dot", action="store_true",
                   help="print the result as a Graphviz DOT picture (ops, typed edges, regions "
                        "as clusters) instead of IR: ember-opt f.mlir --emit-dot | dot -Tsvg")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an internal error")
    p.add_argument("--list-passes", action="store_true",
                   help="list the registered passes and pipelines with their options, and exit")
    return p


class ChunkResult:
    """The outcome of processing one chunk: printed IR (or None) and its diagnostics."""

    def __init__(self, text: str | None, diagnostics: list[Diagnostic]):
        self.text = text
        self.diagnostics = diagnostics


def process_chunk(source: str, args, context: ir.Context) -> ChunkResult:
    """Parses, verifies, transforms and prints one chunk of input."""
    with context, ir.Location.unknown():
        try:
            module = parse_module(source)
        except ParseError as e:
            return ChunkResult(None, e.diagnostics)
        problems = verifier.verify(module)
        if problems:
            return ChunkResult(None, problems)
        emitted = _run_pipeline(module, args, context) if args.pass_pipeline else []
        if any(d.severity == "error" for d in emitted):
            return ChunkResult(None, emitted)
        if args.emit_dot:
            return ChunkResult(module_to_dot(module), emitted)
        text = module.operation.get_asm(print_generic_op_form=args.mlir_print_op_generic,
                                        enable_debug_info=args.mlir_print_debuginfo)
        return ChunkResult(text, emitted)  # the passes' warnings and remarks


def _run_pipeline(module: ir.Module, args, context: ir.Context) -> list[Diagnostic]:
    """Runs `-p` on `module`; returns the diagnostics the passes emitted (errors among them
    when it failed)."""
    try:
        pipeline = Pipeline.parse(args.pass_pipeline)
    except PipelineError as e:
        return [Diagnostic(f"invalid pass pipeline: {e}")]

    print_options = {"print_generic_op_form": args.mlir_print_op_generic,
                     "enable_debug_info": args.mlir_print_debuginfo}

    def printer(m: ir.Module) -> str:
        return m.operation.get_asm(**print_options)
    instruments = []
    if args.ir_diff_report:
        instruments.append(IRDiffRecorder(module, args.report_label, str(pipeline), print_options))
        args.recorders.append(instruments[-1])
    try:
        options = instrumentation(args)
        options["instruments"] += tuple(instruments)
        report = pipeline.run(module, verify_each=True, **options,
                              stream=sys.stderr, printer=printer, print_options=print_options,
                              statistics=args.pass_statistics)
    except PassFailure as e:
        if debugging(args.debug) and e.__cause__ is not None:  # what a user's pass raised, where
            traceback.print_exception(e.__cause__, file=sys.stderr)
        located = any(d.severity == "error" for d in e.diagnostics)
        message = str(e).split("\nreproducer: ")[0]  # the reproducer is a note of its own
        found = e.diagnostics if located else [*e.diagnostics, Diagnostic(message)]
        if getattr(e, "reproducer", None):
            found = found + [Diagnostic(f"reproducer written to {e.reproducer}; rerun with: "
                                        f"{e.reproducer_command}", severity="note")]
        return found
    if args.pass_statistics:
        sys.stderr.write(report.format_statistics())
    return report.diagnostics


def split_chunks(text: str, split: bool) -> list[str]:
    """Splits at marker lines, padding each chunk so its line numbers match the file."""
    if not split:
        return [text]
    chunks, current, start = [], [], 0
    for number, line in enumerate(text.split("\n")):
        if line.strip() == SPLIT_MARKER:
            chunks.append("\n" * start + "\n".join(current))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append("\n" * start + "\n".join(current))
    return chunks


def run(args) -> int:
    name = "<stdin>" if args.input == "-" else args.input
    text = read_input(args.input)
    extra = bisect_cli.prepare(args, text)  # (may take -p from a reproducer)
    if args.ir_diff_report and not args.pass_pipeline:
        raise ToolError("--ir-diff-report shows what the passes of -p did: give a pipeline")
    if args.bisect_against_interpreter:
        return bisect_cli.run_bisection(args, text, extra)
    if args.opt_bisect_limit is not None:
        with bisect_limit.limited(args.opt_bisect_limit):
            return _run_chunks(args, name, text)
    if args.verify_diagnostics:  # the failures are expected: no reproducers
        with reproducer.off():
            return _run_chunks(args, name, text)
    return _run_chunks(args, name, text)


def _run_chunks(args, name: str, text: str) -> int:
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    # errors of parsing arrive via MLIRError; a pipeline run collects its own diagnostics
    context.attach_diagnostic_handler(lambda d: True)
    outputs, failed, args.recorders = [], False, []
    for number, chunk in enumerate(split_chunks(text, args.split_input_file), 1):
        args.report_label = f"{name}, chunk {number}" if args.split_input_file else name
        result = process_chunk(chunk, args, context)
        if args.verify_diagnostics:
            failed |= not expect.check(chunk, result.diagnostics, name, sys.stderr)
        elif result.diagnostics:  # a pass's warnings and remarks alone do not fail
            failed |= any(d.severity == "error" for d in result.diagnostics)
            for d in result.diagnostics:
                print(d.format(expect.display_name(d, name)), file=sys.stderr)
        if result.text is not None:
            outputs.append(result.text)
    rendered = (SPLIT_MARKER + "\n").join(outputs)
    write_output(args.output, rendered)
    if args.recorders:  # (none when no pipeline ran: the errors say why)
        write_output(args.ir_diff_report, render_html(args.recorders, f"IR diff report: {name}"))
    return 1 if failed else 0


def _list_passes(args) -> int:
    """--list-passes, the plugins' passes included."""
    for path in args.load_pass_plugin:
        load_pass_plugin(path)
    write_output("-", listing())
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.list_passes:
        return run_tool("ember-opt", lambda: _list_passes(args), "-", args.debug)
    name = "<stdin>" if args.input == "-" else args.input
    return run_tool("ember-opt", lambda: run(args), name, args.debug)


if __name__ == "__main__":
    sys.exit(main())
