"""Reproducers: one self-contained `.mlir` file per failure, as MLIR's crash reproducers.

When a pipeline run fails (a pass raises, or leaves IR the verifier refuses), Pipeline.run
replays the run one pass at a time from a copy of its input, finds the failing pass and
writes the IR before it with that pass embedded as MLIR embeds it:

    {-#
      external_resources: {
        mlir_reproducer: {
          pipeline: "builtin.module(ember-licm)",
          disable_threading: true,
          verify_each: true
        }
      }
    #-}
    module { ... }

`ember-opt FILE --run-reproducer` reads the pipeline back and runs it (mlir-opt's flag);
the error message carries the file's path and that exact command (with
`--load-pass-plugin=...` for passes registered from outside Ember). This is MLIR's *local*
reproducer (`--mlir-pass-pipeline-local-reproducer`); when the replay does not fail again
(the failure depends on more than the IR), the file holds the run's input and whole
pipeline instead, MLIR's default. Ember extends the resource with an `ember_bisect` entry
for miscompile reproducers (runtime/repro_bisect.py).

`EMBER_REPRO_DIR` chooses the directory (default `<system temp>/ember-repro`; `off`
disables writing). Files are named by a hash of their contents, so a failure that repeats
rewrites one file.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import os
import re
from typing import Iterator

from mlir import ir

from ember.dialects.ember import digest
from ember.passes import bisect_limit, registry
from ember.passes.base import Pass
from ember.passes.pipeline_syntax import Nest, Upstream, spelling
from ember.dialects.ember.parsing import split_top_level

ENV = "EMBER_REPRO_DIR"
RESOURCE = "mlir_reproducer"
EXTRA = "ember_bisect"
_BLOCK = re.compile(r"\{-#(.*?)#-\}", re.S)
_REPLAYING: contextvars.ContextVar[bool] = contextvars.ContextVar("ember_repro_replaying",
                                                                  default=False)
_OFF: contextvars.ContextVar[bool] = contextvars.ContextVar("ember_repro_off", default=False)


def directory() -> str | None:
    """Where reproducers go: `EMBER_REPRO_DIR`, else `<temp>/ember-repro`; None when off."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen.lower() == "off":
        return None
    import tempfile  # on use: ~5 ms of import ember
    return chosen or os.path.join(tempfile.gettempdir(), "ember-repro")


def enabled() -> bool:
    return not _REPLAYING.get() and not _OFF.get() and directory() is not None


@contextlib.contextmanager
def off() -> Iterator[None]:
    """Runs pipelines without writing reproducers (failures expected, as under
    ember-opt --verify-diagnostics)."""
    token = _OFF.set(True)
    try:
        yield
    finally:
        _OFF.reset(token)


def header(pipeline: str, extra: dict | None = None) -> str:
    """The `{-# external_resources ... #-}` block embedding `pipeline` (and `extra`)."""
    import json  # (here and in `read`: reproducers are written when something failed)
    lines = ["{-#", "  external_resources: {", f"    {RESOURCE}: {{",
             f"      pipeline: {json.dumps(pipeline)},",
             "      disable_threading: true,", "      verify_each: true", "    }"]
    if extra:
        lines[-1] += ","
        lines.append(f"    {EXTRA}: {{")
        # resource values are strings, booleans or blobs in MLIR's syntax: no numbers
        items = [f"      {k}: {json.dumps(v if isinstance(v, (str, bool)) else str(v))}"
                 for k, v in extra.items()]
        lines += [item + ("," if i < len(items) - 1 else "") for i, item in enumerate(items)]
        lines.append("    }")
    return "\n".join(lines + ["  }", "#-}", ""])


def read(text: str) -> tuple[dict, dict]:
    """The `mlir_reproducer` and `ember_bisect` entries of a reproducer's text; ValueError
    saying what is missing when there is no embedded pipeline."""
    import json
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    found = _BLOCK.search(code)
    if not found:
        raise ValueError("the input has no '{-# external_resources: { mlir_reproducer: "
                         "{ pipeline: \"...\" } } #-}' block; --run-reproducer runs files "
                         "that Ember or mlir-opt wrote when a pipeline failed")
    entries = {}
    for key in (RESOURCE, EXTRA):
        body = re.search(key + r"\s*:\s*\{(.*?)\}", found.group(1), re.S)
        if body:
            entries[key] = {k: json.loads(v) for k, v in re.findall(
                r"([A-Za-z_]+)\s*:\s*(\"(?:[^\"\\]|\\.)*\"|true|false)",
                body.group(1))}
    if "pipeline" not in entries.get(RESOURCE, {}):
        raise ValueError(f"the reproducer's {RESOURCE} resource has no pipeline")
    return entries[RESOURCE], entries.get(EXTRA, {})


def single_steps(steps: list) -> list[str]:
    """The pipeline cut into single pass applications, each spelled as a pipeline element:
    each ember pass, each upstream element, each pass of a nest as `func.func(pass)`."""
    out = []
    for step in steps:
        if isinstance(step, Upstream):
            out += _upstream_steps(step.text)
        elif isinstance(step, Nest):
            out += [f"{step.anchor}({s})" for s in single_steps(step.steps)]
        else:
            out.append(spelling([step]))
    return out


def _upstream_steps(text: str) -> list[str]:
    """`cse,func.func(cse,canonicalize)` -> cse, func.func(cse), func.func(canonicalize)."""
    out = []
    for element in (e.strip() for e in split_top_level(text, "({", ")}")):
        head, paren, body = element.partition("(")
        if paren and "{" not in head and element.endswith(")"):
            out += [f"{head.strip()}({inner})" for inner in _upstream_steps(body[:-1])]
        else:
            out.append(element)
    return out


def plugin_files(steps: list) -> list[str]:
    """The source files of the registered passes among `steps` that are not Ember's own
    (what `--load-pass-plugin` must load for a command to find them)."""
    files = []
    for step in steps:
        if isinstance(step, Nest):
            found = plugin_files(step.steps)
        elif isinstance(step, Pass) and not type(step).__module__.startswith("ember."):
            found = [os.path.abspath(inspect.getsourcefile(type(step)) or "")]
        else:
            found = []
        files += [f for f in found if f and f not in files]
    return files


def command(path: str, plugins: list[str], extra: str = "") -> str:
    """The ember-opt command that re-runs reproducer `path`."""
    import shlex
    loads = "".join(f" --load-pass-plugin={shlex.quote(p)}" for p in plugins)
    return f"ember-opt {shlex.quote(path)} --run-reproducer{loads}{extra}"


def write(ir_text: str, pipeline: str, extra: dict | None = None,
          stem: str = "repro") -> str | None:
    """Writes a reproducer; returns its path (None when reproducers are off or the
    directory cannot be written)."""
    where = directory()
    if where is None:
        return None
    text = header(pipeline, extra) + ir_text.rstrip("\n") + "\n"
    name = f"{stem}-{digest.hexdigest(text.encode())[:12]}.mlir"
    try:
        os.makedirs(where, exist_ok=True)
        path = os.path.join(where, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError:
        return None
    return path


def snapshot(module: ir.Module):
    """A detached copy of `module` taken before a run (None when reproducers are off)."""
    return module.operation.clone() if enabled() else None


@contextlib.contextmanager
def replaying() -> Iterator[None]:
    """Runs pipelines without writing reproducers or counting opt-bisect applications."""
    token = _REPLAYING.set(True)
    try:
        with bisect_limit.suspended():
            yield
    finally:
        _REPLAYING.reset(token)


def for_failure(run_steps, steps: list, copy, context: ir.Context) -> tuple[str, str] | None:
    """(path, command) of the reproducer of a failed run of `steps` whose input was `copy`:
    the IR before the first single step that fails when replayed with `run_steps(module,
    text)`, else the input and the whole pipeline."""
    text = copy.get_asm(enable_debug_info=True)
    failing, before = None, text
    with replaying():
        try:
            with context, ir.Location.unknown():
                module = ir.Module.parse(text)
                for step in single_steps(steps):
                    before = module.operation.get_asm(enable_debug_info=True)
                    try:
                        run_steps(module, step)
                    except Exception:  # noqa: BLE001 - any failure is the one to reproduce
                        failing = step
                        break
        except ir.MLIRError:
            failing = None
    pipeline = f"builtin.module({failing or spelling(steps)})"
    path = write(before if failing else text, pipeline)
    if path is None:
        return None
    return path, command(path, plugin_files(steps))


def codegen_note(module: ir.Module, stage: str = "llvmir") -> str:
    """For a failed translation of LLVM-dialect `module`: writes it (no pass to embed, the
    failing step is code generation) and returns the lines that name it and the
    `ember-compile` command that retries the step ("" when reproducers are off)."""
    if not enabled():
        return ""
    text = module.operation.get_asm(enable_debug_info=True)
    where = directory()
    name = f"codegen-{digest.hexdigest(text.encode())[:12]}.mlir"
    try:
        os.makedirs(where, exist_ok=True)
        path = os.path.join(where, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(f"// The input of a failed {stage} step (code generation).\n{text}\n")
    except OSError:
        return ""
    import shlex
    return (f"\nreproducer: {path}\nrun: ember-compile {shlex.quote(path)} --from=llvm "
            f"--emit={stage}")
