"""How the command-line tools end: every exception becomes an `error:` line, never a traceback.

`run_tool(prog, body, debug)` calls `body()` and maps what it raises:

- a problem with the input or the command line (the typed errors of the layers below:
  ParseError, VerificationError, PassFailure, PipelineError, BackendError, NotCompilable,
  TranslationError, MLIR's own MLIRError, OSError, ToolError) prints its diagnostics,
  MLIR-style and located where they can be (`input.mlir:3:8: error: ...`), exit status 1;
- anything else is a bug in Ember: one line, `prog: internal error: ...; please report it`,
  exit status 2, and the traceback only with `--debug` or EMBER_DEBUG=1;
- Ctrl-C exits with 130, quietly.

Upstream equivalent: `mlir::MlirOptMain`'s `LogicalResult` plus LLVM's crash reporter, which
prints a stack dump only for crashes.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from typing import Callable

from mlir import ir

from ember import errors
from ember.backends.base import NotCompilable
from ember.dialects.ember.errors import EmberError
from ember.dialects.ember.parsing import ParseError, decode, diagnostics_of
from ember.dialects.ember.verifier import Diagnostic, VerificationError
from ember.passes import pipeline_syntax, registry
from ember.passes.pipeline import PassFailure, PipelineError
from ember.passes.printing import ALL, PrintIR
from ember.tools.diagnostics import display_name

DEBUG_ENV = "EMBER_DEBUG"


class ToolError(EmberError):
    """A problem with the command line or the input that has no location (exit status 1)."""


def add_instrumentation_flags(p: argparse.ArgumentParser, where: str = "") -> None:
    """MLIR's pass instrumentation, the same flags in every tool that runs pipelines."""
    p.add_argument("--print-ir-after-all", "--mlir-print-ir-after-all", action="store_true",
                   help=f"print the IR after every pass{where} (to stderr)")
    p.add_argument("--print-ir-after", "--mlir-print-ir-after", action="append", default=[],
                   metavar="PASS", help="print the IR after this pass (repeatable)")
    p.add_argument("--print-ir-before", "--mlir-print-ir-before", action="append", default=[],
                   metavar="PASS", help="print the IR before this pass (repeatable)")
    p.add_argument("--print-ir-before-all", "--mlir-print-ir-before-all", action="store_true",
                   help=f"print the IR before every pass{where} (to stderr)")
    p.add_argument("--print-ir-after-change", "--mlir-print-ir-after-change",
                   action="store_true",
                   help="print the IR after a pass only when the pass changed it")
    p.add_argument("--print-ir-after-failure", "--mlir-print-ir-after-failure",
                   action="store_true", help="print the IR a failing pass left")
    p.add_argument("--print-ir-module-scope", "--mlir-print-ir-module-scope",
                   action="store_true",
                   help="print the whole module, not only the function a nested pass ran "
                        "on (--print-ir-before/-before-all/-after-change/-after-failure)")
    p.add_argument("--timing", "--mlir-timing", action="store_true",
                   help=f"report the time each pass took{where} (to stderr)")


def instrumentation(args: argparse.Namespace) -> dict:
    """Those flags as Pipeline.run's keyword arguments (the printing ones other than
    --print-ir-after-all as a PrintIR instrument, passes/printing.py); ToolError for a pass
    name that is no pass (mlir-opt refuses those too)."""
    for name in (*args.print_ir_before, *args.print_ir_after):
        if name not in registry.PASSES and name not in registry.PIPELINES and \
                not pipeline_syntax.is_upstream_pass(name):
            raise ToolError(f"--print-ir-before/--print-ir-after: unknown pass '{name}'"
                            f"{pipeline_syntax.suggest(name)}")
    printer = PrintIR(before=ALL if args.print_ir_before_all else args.print_ir_before,
                      after_change=args.print_ir_after_change,
                      after_failure=args.print_ir_after_failure,
                      module_scope=args.print_ir_module_scope,
                      print_options={
                          "print_generic_op_form": getattr(args, "mlir_print_op_generic", False),
                          "enable_debug_info": getattr(args, "mlir_print_debuginfo", False)})
    return {"print_ir_after_all": args.print_ir_after_all,
            "print_ir_after": tuple(args.print_ir_after), "timing": args.timing,
            "instruments": (printer,) if printer else ()}


def read_input(name: str) -> str:
    """The text of file `name` ('-': stdin); ToolError or a located ParseError if it cannot
    be read or is not UTF-8."""
    try:
        if name == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(name, "rb") as f:
                data = f.read()
    except OSError as e:
        raise ToolError(f"cannot read '{name}': {e.strerror or e}") from None
    return decode(data)


def write_output(name: str, out: str | bytes) -> None:
    """Writes `out` to file `name` ('-': stdout); ToolError if it cannot."""
    try:
        if name == "-":
            if isinstance(out, bytes):
                sys.stdout.buffer.write(out)
            else:
                sys.stdout.write(out)
            sys.stdout.flush()
            return
        with open(name, "wb" if isinstance(out, bytes) else "w") as f:
            f.write(out)
    except OSError as e:
        raise ToolError(f"cannot write '{name}': {e.strerror or e}") from None


def _diagnostics(e: BaseException) -> list[Diagnostic] | None:
    """The located diagnostics behind a user-facing error, if it carries any."""
    if isinstance(e, (ParseError, VerificationError)):
        return e.diagnostics
    if isinstance(e, PassFailure) and e.diagnostics:
        return e.diagnostics
    if isinstance(e, ir.MLIRError):
        return diagnostics_of(e)
    return None


def _user_errors() -> tuple:
    """The errors reported as a message rather than as a bug. The backends' classes are
    looked up (em.errors loads them on first use) only when there is an error to report, so
    that a tool which lowers nothing loads no backend."""
    return (ParseError, VerificationError, PassFailure, PipelineError, errors.BackendError,
            NotCompilable, errors.TranslationError, ir.MLIRError, ToolError, errors.BisectError)


def report(prog: str, e: BaseException, input_name: str) -> list[str] | None:
    """The lines to print for a user-facing error `e`; None when `e` is a bug."""
    found = _diagnostics(e)
    if found is not None:
        return [d.format(display_name(d, input_name)) for d in found] + \
            reproducer_notes(prog, e)
    if isinstance(e, OSError):
        where = f"'{e.filename}': " if e.filename else ""
        return [f"{prog}: error: {where}{e.strerror or e}"]
    if isinstance(e, _user_errors()):
        return [f"{prog}: error: {e}"]
    if isinstance(e, MemoryError):
        return [f"{prog}: error: out of memory (is the input or a shape in it too large?)"]
    return None


def reproducer_notes(prog: str, e: BaseException) -> list[str]:
    """The note naming the reproducer a failed pipeline wrote (passes/reproducer.py), which
    wrapping errors carry in their message or notes."""
    text = "\n".join([str(e), *getattr(e, "__notes__", ())])
    found = re.search(r"reproducer: (.+)\nrun: (.+)", text)
    return [f"{prog}: note: reproducer written to {found[1]}; rerun with: {found[2]}"] \
        if found else []


def one_line(e: BaseException, limit: int = 300) -> str:
    """`Type: message` on one line, shortened to `limit` characters."""
    text = re.sub(r"\s+", " ", f"{type(e).__name__}: {e}").strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


def debugging(flag: bool = False) -> bool:
    """Whether tracebacks are wanted: `flag` (a tool's `--debug`) or EMBER_DEBUG=1."""
    return bool(flag or os.environ.get(DEBUG_ENV))


def run_tool(prog: str, body: Callable[[], int], input_name: str, debug: bool = False) -> int:
    """Runs `body` and turns whatever it raises into an exit status (see the docstring)."""
    debug = debugging(debug)
    try:
        return body()
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # noqa: BLE001 (the tools' last line of defence)
        lines = report(prog, e, input_name)
        if debug:
            traceback.print_exc()
        if lines is not None:
            for line in lines:
                print(line, file=sys.stderr)
            return 1
        print(f"{prog}: internal error: {one_line(e)}; this is a bug in Ember, please report "
              f"it with the input (rerun with --debug or {DEBUG_ENV}=1 for the traceback)",
              file=sys.stderr)
        for line in reproducer_notes(prog, e):
            print(line, file=sys.stderr)
        return 2
