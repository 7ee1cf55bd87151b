"""`ember-opt`: the `mlir-opt` of the ember dialect.

Parses a `.mlir` file (ember ops and any upstream dialect), verifies it with MLIR and with the
ember op specs, runs a textual pass pipeline and prints the result:

    ember-opt FILE [-p PIPELINE] [--split-input-file] [--verify-diagnostics]
              [--print-ir-after-all] [--mlir-print-op-generic] [-o OUT]

Errors are printed MLIR-style (`file:line:col: error: message`) with a non-zero exit; the
tool never shows a Python traceback for bad input (set EMBER_DEBUG=1 to see one for a bug).
Input nested deeper than MAX_NESTING brackets is refused before MLIR sees it: MLIR's parser
and the verifier recurse once per level and would overflow the stack.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback

from mlir import ir

from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.verifier import Diagnostic
from ember.passes.pipeline import PassFailure, Pipeline, PipelineError
from ember.tools import diagnostics as expect

SPLIT_MARKER = "// -----"
# Brackets; real IR stays far below. MLIR overflows the stack at a few thousand nested regions,
# the Python verifier's walk (recursive) at about a thousand.
MAX_NESTING = 512

# Brackets that nest, and the tokens whose brackets do not count: strings, comments, `->`, `>=`.
_NESTING_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|->|>=|[{(\[<]|[})\]>]')


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
    p.add_argument("--print-ir-after-all", "--mlir-print-ir-after-all", action="store_true",
                   help="print the IR after every pass (to stderr)")
    p.add_argument("--print-ir-after", action="append", default=[], metavar="PASS",
                   help="print the IR after this pass (repeatable)")
    p.add_argument("--timing", "--mlir-timing", action="store_true",
                   help="report the time each pass took (to stderr)")
    p.add_argument("--pass-statistics", "--mlir-pass-statistics", action="store_true",
                   help="report each pass's statistics (to stderr)")
    p.add_argument("--mlir-print-op-generic", action="store_true",
                   help="print operations in generic form")
    p.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    p.add_argument("--allow-unregistered-dialect", action="store_true",
                   help="accept operations of dialects that are not registered")
    return p


class ChunkResult:
    """The outcome of processing one chunk: printed IR (or None) and its diagnostics."""

    def __init__(self, text: str | None, diagnostics: list[Diagnostic]):
        self.text = text
        self.diagnostics = diagnostics


def _from_mlir_error(e: ir.MLIRError) -> list[Diagnostic]:
    found = []
    for d in e.error_diagnostics:
        found.append(Diagnostic.at(d.location, d.message))
        found += [Diagnostic.at(n.location, n.message, "note") for n in d.notes]
    return found or [Diagnostic(str(e))]


def nesting_problem(source: str) -> Diagnostic | None:
    """An error at the first bracket nested deeper than MAX_NESTING, or None."""
    depth = 0
    for m in _NESTING_TOKEN.finditer(source):
        token = m.group()
        if token in ("{", "(", "[", "<"):
            depth += 1
            if depth > MAX_NESTING:
                line = source.count("\n", 0, m.start()) + 1
                col = m.start() - source.rfind("\n", 0, m.start())
                return Diagnostic(f"brackets nest more than {MAX_NESTING} levels deep; "
                                  "ember-opt does not parse such input", line=line, col=col)
        elif token in ("}", ")", "]", ">"):
            depth = max(depth - 1, 0)
    return None


def process_chunk(source: str, args, context: ir.Context) -> ChunkResult:
    """Parses, verifies, transforms and prints one chunk of input."""
    too_deep = nesting_problem(source)
    if too_deep is not None:
        return ChunkResult(None, [too_deep])
    with context, ir.Location.unknown():
        try:
            module = ir.Module.parse(source)
        except ir.MLIRError as e:
            return ChunkResult(None, _from_mlir_error(e))
        problems = verifier.verify(module)
        if problems:
            return ChunkResult(None, problems)
        if args.pass_pipeline:
            failure = _run_pipeline(module, args, context)
            if failure is not None:
                return ChunkResult(None, failure)
        text = module.operation.get_asm(print_generic_op_form=args.mlir_print_op_generic,
                                        enable_debug_info=args.mlir_print_debuginfo)
        return ChunkResult(text, [])


def _run_pipeline(module: ir.Module, args, context: ir.Context) -> list[Diagnostic] | None:
    """Runs `-p` on `module`; returns diagnostics on failure, None on success."""
    try:
        pipeline = Pipeline.parse(args.pass_pipeline)
    except PipelineError as e:
        return [Diagnostic(f"invalid pass pipeline: {e}")]

    def printer(m: ir.Module) -> str:
        return m.operation.get_asm(print_generic_op_form=args.mlir_print_op_generic,
                                   enable_debug_info=args.mlir_print_debuginfo)
    try:
        report = pipeline.run(module, verify_each=True, print_ir_after_all=args.print_ir_after_all,
                              print_ir_after=tuple(args.print_ir_after), timing=args.timing,
                              stream=sys.stderr, printer=printer,
                              print_options={"print_generic_op_form": args.mlir_print_op_generic,
                                             "enable_debug_info": args.mlir_print_debuginfo})
    except PassFailure as e:
        return e.diagnostics or [Diagnostic(str(e))]
    if args.pass_statistics:
        sys.stderr.write(report.format_statistics())
    return None


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


def _reason(e: Exception) -> str:
    if isinstance(e, UnicodeDecodeError):
        return f"not valid UTF-8 (byte {e.start})"
    if isinstance(e, OSError) and e.strerror:
        return e.strerror
    return str(e)


def run(args) -> int:
    name = "<stdin>" if args.input == "-" else args.input
    try:
        if args.input == "-":
            text = sys.stdin.buffer.read().decode("utf-8")
        else:
            with open(args.input, encoding="utf-8") as f:
                text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"ember-opt: error: cannot read '{name}': {_reason(e)}", file=sys.stderr)
        return 1
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    context.attach_diagnostic_handler(lambda d: True)  # errors arrive via MLIRError
    outputs, failed = [], False
    for chunk in split_chunks(text, args.split_input_file):
        result = process_chunk(chunk, args, context)
        if args.verify_diagnostics:
            failed |= not expect.check(chunk, result.diagnostics, name, sys.stderr)
        elif result.diagnostics:
            failed = True
            for d in result.diagnostics:
                print(d.format(expect.display_name(d, name)), file=sys.stderr)
        if result.text is not None:
            outputs.append(result.text)
    rendered = (SPLIT_MARKER + "\n").join(outputs)
    if args.output == "-":
        sys.stdout.write(rendered)
    else:
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(rendered)
        except OSError as e:
            print(f"ember-opt: error: cannot write '{args.output}': {_reason(e)}",
                  file=sys.stderr)
            return 1
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in ember-opt: say so briefly, never dump a traceback
        if os.environ.get("EMBER_DEBUG"):
            traceback.print_exc()
        print(f"ember-opt: internal error ({type(e).__name__}: {e}); "
              "rerun with EMBER_DEBUG=1 and report it", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
