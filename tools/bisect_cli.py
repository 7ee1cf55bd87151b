"""ember-opt's debugging flags: plugins, reproducers, opt-bisect and miscompile bisection.

    --load-pass-plugin=FILE.py      import a plugin's passes (repeatable; tools/plugins.py)
    --run-reproducer                run the pipeline embedded in the input (a reproducer)
    --opt-bisect-limit=N            apply only the first N pass applications (LLVM's flag)
    --bisect-against-interpreter    find the first step whose output differs from the input's
        [--function NAME] [--inputs random|FILE.npz] [--seed S] [--rtol R] [--atol A]

The miscompile bisection (runtime/repro_bisect.py) prints the culprit, the IR before and
after it and its reproducer, and exits 1; "every step agrees" exits 0. On a reproducer
whose `ember_bisect` entry names the function, inputs and tolerances, those are the
defaults.
"""

from __future__ import annotations

import argparse
import sys

from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.parsing import parse_module
from ember.passes import reproducer
from ember.passes.pipeline import Pipeline, PipelineError
from ember.passes.ir_utils import symbol_table
from ember.runtime.repro_bisect import bisect, load_inputs
from ember.tools.driver import ToolError
from ember.tools.plugins import load_pass_plugin


def add_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--load-pass-plugin", action="append", default=[], metavar="FILE.py",
                   help="import this Python file so its @register_pass passes can be used "
                        "(repeatable)")
    p.add_argument("--run-reproducer", action="store_true",
                   help="run the pipeline embedded in the input's mlir_reproducer resource")
    p.add_argument("--opt-bisect-limit", type=int, metavar="N",
                   help="apply only the first N pass applications (-1: all), printing each "
                        "as 'BISECT: running pass (i) ...' to stderr")
    p.add_argument("--bisect-against-interpreter", action="store_true",
                   help="run -p one pass at a time and report the first whose output "
                        "differs from the input's on Ember's interpreter")
    p.add_argument("--function", help="the function to bisect (default: the only one)")
    p.add_argument("--inputs", default=None, metavar="random|FILE.npz",
                   help="the bisection's inputs: seeded random (default) or arrays of an .npz")
    p.add_argument("--seed", type=int, default=0, help="seed of random inputs")
    p.add_argument("--rtol", type=float, default=None, help="relative tolerance (1e-5)")
    p.add_argument("--atol", type=float, default=None, help="absolute tolerance (1e-6)")
    p.add_argument("--no-compiled", action="store_true",
                   help="bisect the pipeline only, not lowering and codegen")


def prepare(args, text: str) -> dict:
    """Loads the plugins and, with --run-reproducer, takes the embedded pipeline into
    `args.pass_pipeline`; returns the reproducer's `ember_bisect` entry ({} if none)."""
    for path in args.load_pass_plugin:
        load_pass_plugin(path)
    if args.bisect_against_interpreter and args.split_input_file:
        raise ToolError("--bisect-against-interpreter works on one module; it cannot be "
                        "combined with --split-input-file")
    if not args.run_reproducer:
        return {}
    if args.pass_pipeline:
        raise ToolError("--run-reproducer runs the pipeline embedded in the input; "
                        "drop -p/--pass-pipeline")
    try:
        resource, extra = reproducer.read(text)
    except ValueError as e:
        raise ToolError(str(e)) from None
    args.pass_pipeline = resource["pipeline"]
    try:
        Pipeline.parse(args.pass_pipeline)
    except PipelineError as e:
        raise ToolError(f"cannot replay the reproducer's pipeline: {e} (a plugin's pass needs "
                        "--load-pass-plugin=FILE.py, as in the command printed with the "
                        "reproducer)") from None
    return extra


def run_bisection(args, text: str, extra: dict, out=None) -> int:
    """--bisect-against-interpreter on the input `text`: 1 on a miscompile, else 0."""
    out = out or sys.stdout
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    context.attach_diagnostic_handler(lambda d: True)  # errors arrive via MLIRError
    with context, ir.Location.unknown():
        module = parse_module(text)
        symbol = args.function or extra.get("function") or _only_function(module)
    source = args.inputs or extra.get("inputs") or "random"
    inputs = None if source == "random" else load_inputs(source)
    rtol = args.rtol if args.rtol is not None else _number(extra, "rtol", 1e-5)
    atol = args.atol if args.atol is not None else _number(extra, "atol", 1e-6)
    found, notes = bisect(text, args.pass_pipeline, symbol, inputs, rtol=rtol, atol=atol,
                          seed=args.seed, compiled=not args.no_compiled, context=context)
    if found is not None:
        out.write(f"{found}\n")
        out.flush()
        print(f"ember-opt: error: miscompile: @{symbol} differs after '{found.pass_name}'",
              file=sys.stderr)
        return 1
    for note in notes:
        out.write(f"note: {note}\n")
    every = "every checked step agrees" if notes else "every step agrees"
    lowering = "" if args.no_compiled or notes else " and lowering and codegen"
    out.write(f"{every}: @{symbol} on {source} inputs through "
              f"'{args.pass_pipeline or 'builtin.module()'}'{lowering}\n")
    return 0


def _number(extra: dict, key: str, default: float) -> float:
    try:
        return float(extra.get(key, default))
    except ValueError:
        raise ToolError(f"the reproducer's ember_bisect {key} is not a number: "
                        f"{extra[key]!r}") from None


def _only_function(module: ir.Module) -> str:
    defined = [n for n, op in symbol_table(module).items()
               if op.name == "func.func" and len(op.regions[0].blocks) > 0]
    if len(defined) != 1:
        raise ToolError(f"the module defines {len(defined)} functions "
                        f"({', '.join('@' + n for n in defined) or 'none'}); choose one "
                        "with --function")
    return defined[0]
