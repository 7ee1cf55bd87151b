"""`ember-compile`: run a backend's stages (the CPU's) on a file and stop at any of them, or
compile a Python function ahead of time into a shared library (em.aot.compile).

    ember-compile SCRIPT.py:fn --signature 'f32[?,784]' [--signature ...] --out DIR
                  [--name N] [--target-cpu host|x86-64-v3|x86-64-v4|CPU] [--no-freeze]
    ember-compile SCRIPT.py:fn [--signature ...] --emit=linalg|...|asm|obj [--out FILE]
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

With `SCRIPT.py:fn`, the script runs (as a module named `__ember_compile__`, so its
`if __name__ == "__main__":` part does not) and its function `fn` (an em.function or a
plain function) is compiled for the `--signature`s, or its input_signature, into `--out`:
lib<name>.so, <name>.h, <name>.json and the numpy-only loader (README, "Ahead-of-time
compilation"). With `--emit=STAGE` instead, the traced function's module at that stage
(`ConcreteFunction.mlir(STAGE)`) is printed, as mlir-opt and llc print; `--out FILE` (or
`-o FILE`) writes it to a file instead, which `--emit=obj` (binary) requires.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import sys

import llvmlite.binding as llvm

from ember import backends
from ember.backends.base import NotCompilable
from ember.backends.cpu.backend import STAGES
from ember.backends.cuda.backend import STAGES as CUDA_STAGES, parse_target
from ember.backends.cpu.compiler import specialize
from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import default_context
from ember.dialects.ember.parsing import ParseError, nesting_problem, parse_module
from ember.dialects.ember.types import parse_type
from ember.dialects.ember.verifier import Diagnostic
from ember.backends.cpu.translate import TranslationError
from ember.passes import reproducer
from ember.tools.driver import (ToolError, add_instrumentation_flags, instrumentation,
                                read_input, run_tool, write_output)

INPUTS = tuple(dict.fromkeys(("ember",) + STAGES[:4] + CUDA_STAGES[:6]))


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-compile", description=__doc__.split("\n\n")[0])
    p.add_argument("input", help="input file ('-' for stdin)")
    p.add_argument("--emit", choices=list(dict.fromkeys(STAGES + CUDA_STAGES)),
                   help="the stage to stop at (default: llvmir on the CPU, ptx for cuda)")
    p.add_argument("--from", dest="source", choices=INPUTS,
                   help="the stage the input file is at (default: ember)")
    p.add_argument("--function", help="function to specialise to --arg-types")
    p.add_argument("--arg-types", help="comma-separated static tensor types")
    p.add_argument("--backend", choices=backends.names(),
                   help="the backend whose stages run (default: cpu)")
    p.add_argument("--target", help="cpu, or cuda[:CHIP] for NVIDIA GPUs, e.g. cuda:sm_90 "
                                    "(the CUDA backend; default chip sm_80)")
    p.add_argument("--cpu", help="target CPU (default: this host's)")
    p.add_argument("--features", help="target features, e.g. +avx2,+fma (default: host's)")
    p.add_argument("--optimize", action="store_true",
                   help="with --emit=llvmir: print the IR after LLVM's -O3 for the target "
                        "(shows vectorisation)")
    add_instrumentation_flags(p, " of every stage")
    aot = p.add_argument_group("ahead of time (input SCRIPT.py:fn)")
    aot.add_argument("--signature", action="append", default=[], metavar="SPEC",
                     help="a tensor argument, e.g. 'f32[?,784]' (repeat per argument)")
    aot.add_argument("--out", help="the folder to write the library to (with --emit: the "
                                   "file to write the stage to; default stdout)")
    aot.add_argument("--name", help="the library's name (default: the function's)")
    aot.add_argument("--target-cpu", default="host",
                     help="host, x86-64-v3, x86-64-v4 or an x86-64 CPU's LLVM name, e.g. "
                          "znver3 (default: host)")
    aot.add_argument("--no-freeze", action="store_true",
                     help="keep variables as buffers the caller can set, not constants")
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


_CHIP = re.compile(r'#nvvm\.target<[^>]*chip = "(sm_\d+)"')
_EMBER_OP = re.compile(r'"?ember\.[a-z_0-9]+"?\(')


def check_stage(text: str, args, lowering) -> None:
    """ToolError when the input is plainly not at the stage `--from` says: ember ops in a
    later stage, or kernels lowered for another chip than `--target` names (the chip is
    fixed when NVVM is attached)."""
    if args.source == "llvmir":
        return
    has_ember = _EMBER_OP.search(text) is not None
    if args.source != "ember" and has_ember:
        raise ToolError(f"the input has ember ops, so it is not at the {args.source} stage: "
                        "drop --from (ember IR is the default input)")
    chip = getattr(getattr(lowering, "options", None), "chip", None)
    found = _CHIP.search(text)
    if chip and args.target and found and found.group(1) != chip:
        raise ToolError(f"the input's kernels were lowered for {found.group(1)} (its "
                        f"#nvvm.target), not for --target={args.target}'s {chip}: give "
                        f"--target cuda:{found.group(1)}, or start from an earlier stage")


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
    try:
        value = lowering.lower(value, stop=args.emit, start=chain[0])  # the shipped stages
    except TranslationError as e:  # `value`, lowered in place, is what failed to translate
        raise TranslationError(f"{e}{reproducer.codegen_note(value)}") from None
    if args.optimize and args.emit == "llvmir":
        value = str(lowering.optimize_llvm(value))
    return value if isinstance(value, (str, bytes)) else str(value)


def _lowering(args):
    """The stages of `args.backend` (backends.Backend.stages), with the options given."""
    options = {"cpu": args.cpu, "features": args.features}
    if args.target == "cpu" and args.backend not in (None, "cpu"):
        raise ToolError(f"--target=cpu compiles with the cpu backend, not "
                        f"--backend={args.backend}")
    if args.target is not None and args.target != "cpu":
        try:
            target = parse_target(args.target)
        except ValueError as e:
            raise ToolError(f"--target: {e}") from None
        if args.backend not in (None, "cuda"):
            raise ToolError(f"--target={args.target} compiles with the cuda backend, not "
                            f"--backend={args.backend}")
        args.backend, options = "cuda", {"chip": target.chip}
        if args.cpu or args.features:
            raise ToolError(f"--cpu and --features choose a CPU; --target={args.target} "
                            "compiles for a GPU")
    args.backend = args.backend or "cpu"
    if args.backend == "cpu" and (args.cpu or args.features):
        from ember.backends.cpu.host_target import target_complaints
        said = target_complaints(args.cpu, args.features)
        if said:  # LLVM would only warn, and compile for a generic CPU
            raise ToolError(f"--cpu/--features: LLVM says {'; '.join(said)}; its names are "
                            "LLVM's (llc -mcpu=help lists them), e.g. --cpu=x86-64-v3 or "
                            "--features=+avx2,+fma")
    try:
        lowering = backends.get(args.backend).stages(instrument=instrumentation(args),
                                                     **options)
    except backends.NotCompilable as e:
        raise ToolError(f"--backend={args.backend}: {e}") from None
    stop = args.emit or ("ptx" if args.backend == "cuda" else "llvmir")
    if stop not in lowering.STAGES:
        raise ToolError(f"--emit={stop}: the {args.backend} backend's stages are "
                        f"{', '.join(lowering.STAGES)}")
    args.emit = stop
    return lowering


_SCRIPT = re.compile(r"(.+\.py):([A-Za-z_][A-Za-z0-9_.]*)")


def _traced_entries(args, verb: str) -> dict:
    """The concrete functions SCRIPT.py:fn traces to for `--signature` (or its
    input_signature): running the script and tracing are the user's code, so what they
    raise is a ToolError."""
    m = _SCRIPT.fullmatch(args.input)
    if m is None:
        raise ToolError(f"{verb} compiles a Python function: give SCRIPT.py:fn, not "
                        f"'{args.input}'")
    script, name = m.groups()
    if not os.path.isfile(script):
        raise ToolError(f"cannot read '{script}': no such file")
    import ember as em
    from ember.runtime.aot.compile import concretes
    from ember.runtime.aot.signature import parse_spec
    try:
        specs = [parse_spec(s) for s in args.signature] or None
    except ValueError as e:
        raise ToolError(f"--signature: {e}") from None
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    scope = runpy.run_path(script, run_name="__ember_compile__")
    fn = scope
    for part in name.split("."):
        fn = fn.get(part) if isinstance(fn, dict) else getattr(fn, part, None)
        if fn is None:
            raise ToolError(f"{script} defines no '{name}'")
    try:  # tracing runs the script's code: what it raises is the user's error
        return dict(concretes(fn, specs))
    except (em.aot.AotError, ValueError, TypeError) as e:
        raise ToolError(str(e)) from None


def emit_script(args) -> int:
    """SCRIPT.py:fn --emit=STAGE: the traced function's module at STAGE, printed (as
    mlir-opt and llc print) or written to `--out FILE` / `-o FILE`; obj, a binary, needs a
    file."""
    if _SCRIPT.fullmatch(args.input) is None:
        raise ToolError(f"'{args.input}' is an IR file: -o FILE names where its stage goes "
                        "(--out is for SCRIPT.py:fn)")
    given = [flag for flag, value in (("--from", args.source), ("--function", args.function),
                                      ("--arg-types", args.arg_types), ("--cpu", args.cpu),
                                      ("--features", args.features), ("--target", args.target),
                                      ("--optimize", args.optimize), ("--name", args.name),
                                      ("--no-freeze", args.no_freeze),
                                      ("--target-cpu", args.target_cpu != "host")) if value]
    if given:
        raise ToolError(f"{', '.join(given)} cannot be used with SCRIPT.py:fn --emit, which "
                        f"lowers the function for this host: drop {'them' if given[1:] else 'it'}")
    if any(instrumentation(args).values()):
        raise ToolError("--print-ir-*/--timing instrument the lowering of an IR file: write "
                        "SCRIPT.py:fn's module with --emit=linalg, then lower that file with "
                        "--from=linalg and the flags")
    if args.emit not in STAGES or args.backend not in (None, "cpu"):
        raise ToolError(f"SCRIPT.py:fn --emit lowers with the cpu backend, whose stages are "
                        f"{', '.join(STAGES)}; for --emit={args.emit} lower its IR file: "
                        "ember-compile FILE.mlir --target ...")
    if args.out and args.output != "-" and args.out != args.output:
        raise ToolError(f"--out {args.out} and -o {args.output} both name the output: give one")
    where = args.out or args.output
    if os.path.isdir(where):
        raise ToolError(f"--emit writes one file, and '{where}' is a folder: give a file "
                        f"name, e.g. {os.path.join(where, 'fn.' + args.emit)}")
    if args.emit == "obj" and where == "-":
        raise ToolError("--emit=obj is a binary object file, not text to print: give "
                        "--out FILE.o")
    concrete = next(iter(_traced_entries(args, "--emit").values()))
    if args.emit == "obj":
        llvm_ir = concrete.mlir("llvmir")
        out = backends.get("cpu").stages().lower(llvm_ir, stop="obj", start="obj")
    else:
        out = concrete.mlir(args.emit)
    write_output(where, out)
    return 0


def compile_script(args) -> int:
    """The ahead-of-time mode: SCRIPT.py:fn to a library in --out (module docstring)."""
    import ember as em
    entries = _traced_entries(args, "--out")
    try:  # past tracing, anything but these is a bug in Ember (internal error, status 2)
        record = em.aot.compile(entries, out_dir=args.out, name=args.name,
                                target_cpu=args.target_cpu,
                                freeze_variables=not args.no_freeze)
    except (em.aot.AotError, NotCompilable) as e:
        raise ToolError(str(e)) from None
    for entry in record["entries"]:
        ins = ", ".join(f"{i['name']}: {_spec(i)}" for i in entry["inputs"])
        outs = ", ".join(_spec(o) for o in entry["outputs"])
        print(f"{record['name']}_{entry['name']}({ins}) -> ({outs})")
    print(f"wrote {', '.join(sorted(record['files']))} and {record['name']}.json to {args.out}")
    return 0


def _spec(spec: dict) -> str:
    dims = ",".join("?" if d is None else str(d) for d in spec["shape"])
    return f"{spec['dtype']}[{dims}]"


def run(args) -> int:
    script = _SCRIPT.fullmatch(args.input) and not os.path.isfile(args.input)
    if args.emit and (script or args.out):
        return emit_script(args)
    if args.out or script:
        if not args.out:
            raise ToolError("SCRIPT.py:fn compiles ahead of time: give --out DIR, or "
                            "--emit=STAGE to print its IR at a stage")
        given = [flag for flag, value in (("--from", args.source),
                                          ("--function", args.function),
                                          ("--arg-types", args.arg_types),
                                          ("--cpu", args.cpu), ("--features", args.features),
                                          ("--target", args.target),
                                          ("--optimize", args.optimize)) if value]
        if given:
            verb = "lowers" if len(given) == 1 else "lower"
            raise ToolError(f"{', '.join(given)} {verb} an IR file; SCRIPT.py:fn --out DIR "
                            "writes a library (its target: --target-cpu)")
        return compile_script(args)
    args.source = args.source or "ember"
    if args.signature:
        raise ToolError("--signature needs SCRIPT.py:fn and --out")
    lowering = _lowering(args)
    if args.source != "ember" and args.source not in lowering.STAGES:
        raise ToolError(f"--from={args.source} is not a stage of the {args.backend} backend "
                        f"(its stages: {', '.join(lowering.STAGES)})")
    if args.source != "ember" and \
            args.source not in lowering.path_to(args.emit, lowering.STAGES[0])[:-1]:
        raise ToolError(f"--emit={args.emit} comes before --from={args.source}")
    if args.arg_types and not args.function:
        raise ToolError("--arg-types needs --function")
    if args.emit == "obj" and args.output == "-":  # (as SCRIPT.py:fn --emit=obj)
        raise ToolError("--emit=obj is a binary object file, not text to print: give "
                        "-o FILE.o")
    text = read_input(args.input)
    check_stage(text, args, lowering)
    try:
        write_output(args.output, compile_text(text, args, lowering))
    except Exception:
        # upstream IR is valid input at any stage, so this is only a guess, said beside
        # the error: a stage's output lowered again from the start fails deep inside
        if args.source == "ember" and _EMBER_OP.search(text) is None and \
                re.search(r"\b(memref<|gpu\.|llvm\.func)", text):
            print("ember-compile: note: the input has no ember ops but memrefs or GPU/LLVM "
                  "ops: if it is the output of a stage, say which with --from=<stage>",
                  file=sys.stderr)
        raise
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    return run_tool("ember-compile", lambda: run(args), name, args.debug)


if __name__ == "__main__":
    sys.exit(main())
