"""`ember-compile`: run a backend's stages (the CPU's) on a file and stop at any of them.

    ember-compile FILE [--emit=linalg|bufferized|llvm|llvmir|asm|obj] [--from=STAGE]
                  [--function NAME --arg-types 'tensor<4xf32>,tensor<4xf32>']
                  [--backend cpu] [--cpu NAME --features +avx2,...] [--print-ir-after-all]
                  [--print-ir-after PASS] [--timing] [-o OUT]

FILE holds ember IR (`--from=ember`, the default), or the output of an earlier stage
(`--from=linalg|bufferized|llvm` for MLIR text, `--from=llvmir` for LLVM IR), so a compile
can resume from any dumped stage. Each MLIR stage is one pipeline of upstream and Ember
passes (backends/cpu/backend.py), which `--print-ir-after-all`, `--print-ir-after` and
`--timing` instrument as ember-opt's do. `--function/--arg-types` first specialise a
function to static input types (as the runtime does per call). Input text goes through the
same guards as ember-opt's (dialects/ember/parsing.py) before MLIR or LLVM parse it; errors
print as `file:line:col: error: ...` with exit status 1, a bug in Ember as one `internal
error` line with exit status 2 (tools/driver.py), never a traceback without `--debug`.
"""

from __future__ import annotations

import argparse
import re
import sys

import llvmlite.binding as llvm

from ember import backends
from ember.backends.cpu.backend import STAGES
from ember.backends.cpu.compiler import specialize
from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.parsing import ParseError, nesting_problem, parse_module
from ember.dialects.ember.types import parse_type
from ember.dialects.ember.verifier import Diagnostic
from ember.tools.driver import (ToolError, add_instrumentation_flags, instrumentation,
                                read_input, run_tool, write_output)

INPUTS = ("ember",) + STAGES[:4]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-compile", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="input file ('-' for stdin)")
    p.add_argument("--emit", choices=STAGES, default="llvmir", help="the stage to stop at")
    p.add_argument("--from", dest="source", choices=INPUTS, default="ember",
                   help="the stage the input file is at")
    p.add_argument("--function", help="function to specialise to --arg-types")
    p.add_argument("--arg-types", help="comma-separated static tensor types")
    p.add_argument("--backend", default="cpu", choices=backends.names(),
                   help="the backend whose stages run (default: cpu)")
    p.add_argument("--cpu", help="target CPU (default: this host's)")
    p.add_argument("--features", help="target features, e.g. +avx2,+fma (default: host's)")
    p.add_argument("--optimize", action="store_true",
                   help="with --emit=llvmir: print the IR after LLVM's -O3 for the target "
                        "(shows vectorisation)")
    add_instrumentation_flags(p, " of every stage")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an internal error")
    return p


def _arg_types(text: str) -> list:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    try:
        return [parse_type(p) for p in parts if p.strip()]
    except (TypeError, ValueError, KeyError) as e:
        raise ToolError(f"--arg-types '{text}': {e}") from None


_LLVM_ERROR = re.compile(r"^<string>:(\d+):(\d+): error: (.*)$", re.MULTILINE)


def check_llvm_ir(text: str) -> None:
    """Raises ParseError, located, unless `text` is LLVM IR that llvmlite parses and verifies
    (nesting is checked first: LLVM's parser recurses once per bracket too)."""
    too_deep = nesting_problem(text, comment=";")
    if too_deep is not None:
        raise ParseError([too_deep])
    try:
        llvm.parse_assembly(text).verify()
    except RuntimeError as e:
        m = _LLVM_ERROR.search(str(e))
        if m is None:
            lines = [line for line in str(e).splitlines() if line.strip()]
            raise ParseError([Diagnostic("invalid LLVM IR: " + " ".join(lines[-3:]))]) from None
        raise ParseError([Diagnostic(m.group(3), "-", int(m.group(1)), int(m.group(2)))]
                         ) from None


def compile_text(text: str, args, lowering) -> str | bytes:
    """Runs the stages of `lowering` from `args.source` to `args.emit` on `text`."""
    if args.source == "llvmir":
        check_llvm_ir(text)
        value = text
    else:
        with default_context():
            module = parse_module(text)
            if args.source == "ember":
                verifier.check(module)
        if args.function:
            if not args.arg_types:
                raise ToolError("--function needs --arg-types")
            module = specialize(str(module), args.function, _arg_types(args.arg_types))
        value = module
    chain = lowering.path_to(args.emit, lowering.STAGES[0])
    if args.source != "ember":
        chain = chain[chain.index(args.source) + 1:]
    value = lowering.lower(value, stop=args.emit, start=chain[0])  # the shipped stages
    if args.optimize and args.emit == "llvmir":
        value = str(lowering.optimize_llvm(value))
    return value if isinstance(value, (str, bytes)) else str(value)


def _lowering(args):
    """The stages of `args.backend` (backends.Backend.stages), with the options given."""
    try:
        return backends.get(args.backend).stages(
            cpu=args.cpu, features=args.features, instrument=instrumentation(args))
    except backends.NotCompilable as e:
        raise ToolError(f"--backend={args.backend}: {e}") from None


def run(args) -> int:
    lowering = _lowering(args)
    if args.source != "ember" and \
            args.source not in lowering.path_to(args.emit, lowering.STAGES[0])[:-1]:
        raise ToolError(f"--emit={args.emit} comes before --from={args.source}")
    if args.arg_types and not args.function:
        raise ToolError("--arg-types needs --function")
    write_output(args.output, compile_text(read_input(args.input), args, lowering))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    return run_tool("ember-compile", lambda: run(args), name, args.debug)


if __name__ == "__main__":
    sys.exit(main())
