"""`ember-compile`: run the CPU backend's stages on a file and stop at any of them.

    ember-compile FILE [--emit=linalg|bufferized|llvm|llvmir|asm|obj] [--from=STAGE]
                  [--function NAME --arg-types 'tensor<4xf32>,tensor<4xf32>']
                  [--cpu NAME --features +avx2,...] [-o OUT]

FILE holds ember IR (`--from=ember`, the default), or the output of an earlier stage
(`--from=linalg|bufferized|llvm` for MLIR text, `--from=llvmir` for LLVM IR), so a compile
can resume from any dumped stage. `--function/--arg-types` first specialise a function to
static input types (as the runtime does per call). Errors print as `error: ...` with exit
status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback

from mlir import ir

from ember.backends.cpu.backend import STAGES, BackendError, CpuBackend, CpuOptions, path_to
from ember.backends.cpu.compiler import NotCompilable, specialize
from ember.backends.cpu.translate import TranslationError
from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.types import parse_type
from ember.passes.pipeline import PassFailure

INPUTS = ("ember",) + STAGES[:4]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-compile", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="input file ('-' for stdin)")
    p.add_argument("--emit", choices=STAGES, default="llvmir", help="the stage to stop at")
    p.add_argument("--from", dest="source", choices=INPUTS, default="ember",
                   help="the stage the input file is at")
    p.add_argument("--function", help="function to specialise to --arg-types")
    p.add_argument("--arg-types", help="comma-separated static tensor types")
    p.add_argument("--cpu", help="target CPU (default: this host's)")
    p.add_argument("--features", help="target features, e.g. +avx2,+fma (default: host's)")
    p.add_argument("--optimize", action="store_true",
                   help="with --emit=llvmir: print the IR after LLVM's -O3 for the target "
                        "(shows vectorisation)")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
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
    return [parse_type(p) for p in parts if p.strip()]


def compile_text(text: str, args) -> str | bytes:
    """Runs the stages from `args.source` to `args.emit` on `text`."""
    backend = CpuBackend(CpuOptions(cpu=args.cpu, features=args.features))
    if args.source == "llvmir":
        value = text
    else:
        with default_context():
            module = ir.Module.parse(text)
            if args.source == "ember":
                verifier.check(module)
        if args.function:
            if not args.arg_types:
                raise ValueError("--function needs --arg-types")
            module = specialize(str(module), args.function, _arg_types(args.arg_types))
        value = module
    chain = path_to(args.emit)
    if args.source != "ember":
        chain = chain[chain.index(args.source) + 1:]
    for stage in chain:
        value = getattr(backend, f"make_{stage}")(value)
    if args.optimize and args.emit == "llvmir":
        value = str(backend.optimize_llvm(value))
    return value if isinstance(value, (str, bytes)) else str(value)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.source != "ember" and args.source not in path_to(args.emit)[:-1]:
        print(f"ember-compile: error: --emit={args.emit} comes before --from={args.source}",
              file=sys.stderr)
        return 1
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"ember-compile: error: cannot read '{args.input}': {e}", file=sys.stderr)
        return 1
    try:
        out = compile_text(text, args)
    except ir.MLIRError as e:
        for d in e.error_diagnostics:
            print(verifier.Diagnostic.at(d.location, d.message).format(args.input),
                  file=sys.stderr)
        return 1
    except verifier.VerificationError as e:
        for d in e.diagnostics:
            print(d.format(args.input), file=sys.stderr)
        return 1
    except (NotCompilable, PassFailure, BackendError, TranslationError, ValueError,
            TypeError, RuntimeError) as e:
        if os.environ.get("EMBER_DEBUG"):
            traceback.print_exc()
        print(f"ember-compile: error: {e}", file=sys.stderr)
        return 1
    mode = "wb" if isinstance(out, bytes) else "w"
    if args.output == "-":
        if isinstance(out, bytes):
            sys.stdout.buffer.write(out)
        else:
            sys.stdout.write(out)
    else:
        with open(args.output, mode) as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
