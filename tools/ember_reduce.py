"""`ember-reduce`: the `mlir-reduce` of the ember dialect, a test-case reducer.

Shrinks a `.mlir` file while an interestingness test still finds it interesting:

    ember-reduce FILE --test SCRIPT [--test-arg ARG ...] [-o OUT]

The test follows mlir-reduce's convention exactly (`mlir::Tester`): it runs as
`SCRIPT [ARG ...] CANDIDATE.mlir`, the candidate's path last, and exits with 1 when the
candidate is interesting (any nonzero status counts) and 0 when not. Upstream's documented
script, written for ember:

    #!/bin/sh
    ember-opt "$1" -p convert-ember-to-linalg 2>&1 | grep -q "cannot lower 'ember.mul'"
    [ $? -eq 0 ] && exit 1 || exit 0

Algorithm (mlir-reduce's reduction tree, run as delta debugging): each strategy of
reduce_rewrites.py lists what it can remove or rewrite; `delta` tries it on the whole list,
then on halves, quarters, ... down to single items (ddmin's chunking, as llvm-reduce), and
keeps a candidate only when it parses, verifies, is smaller (in ops, then in characters) and
is still interesting. The strategies run in rounds (erase functions, erase ops, inline
regions, forward operands, splat constants, erase arguments) until a round changes nothing.
The input must be interesting to begin with (upstream warns "uninterested module will not be
reduced"; here it is an error, exit status 1). Progress goes to stderr
(`ember-reduce: ops: 200 -> 57 -> 9 (31 tests)`), the result to `-o` (default stdout).

Upstream's spelling works too: `ember-reduce FILE -reduction-tree='traversal-mode=0
test=SCRIPT test-arg=A,B'` (the only traversal mode upstream has is 0, single path).

Where Ember differs from mlir-reduce: there is no `--split-input-file` and no
`-opt-reduction-pass`; an op is erased with its uses handed to new function arguments of the
same type (upstream erases it and keeps the candidate only if it still verifies); the
script's own output is discarded; sizes are counted in ops, not bytes; Ctrl-C writes the
smallest interesting module found so far (exit status 130), which upstream lists as future
work.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
import tempfile
from typing import Callable

from mlir import ir

from ember.dialects.ember import verifier
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.parsing import parse_module
from ember.tools import reduce_rewrites as rw
from ember.tools.driver import ToolError, read_input, run_tool, write_output
from ember.tools.reduce_tester import Tester, checked_module, count_ops, is_valid

__all__ = ["main", "reduce"]


@dataclasses.dataclass(frozen=True)
class Strategy:
    """A family of rewrites: `items` lists what can be touched in a module, `apply`
    rewrites the chosen items of it (False: this choice cannot be made)."""

    name: str
    items: Callable[[ir.Module], list]
    apply: Callable[[ir.Module, list], bool]


STRATEGIES = (
    Strategy("erase-functions", rw.functions, rw.erase_functions),
    Strategy("erase-ops", rw.body_ops, rw.erase_ops),
    Strategy("inline-regions", rw.region_ops, rw.inline_regions),
    Strategy("forward-operands", rw.forwardable_ops, rw.forward_operands),
    Strategy("splat-constants", rw.dense_constants, rw.splat_constants),
    Strategy("erase-arguments", rw.unused_arguments, rw.erase_arguments),
)


class Reducer:
    """The current (smallest interesting) module text and the way to make it smaller."""

    def __init__(self, text: str, tester: Tester, context: ir.Context, progress):
        self.text = text
        self.tester = tester
        self.context = context
        self.progress = progress
        self.tested: dict[str, bool] = {}
        self.size = self._size(self._module(), text)

    def _module(self) -> ir.Module:
        return parse_module(self.text, context=self.context)

    @staticmethod
    def _size(module: ir.Module, text: str) -> tuple[int, int]:
        """(ops, characters): every kept candidate is smaller in this order, so the
        rounds end."""
        return count_ops(module), len(text)

    def count(self, strategy: Strategy) -> int:
        with self.context, ir.Location.unknown():
            return len(strategy.items(self._module()))

    def candidate(self, strategy: Strategy, start: int, stop: int):
        """(text, size) of the current module with items [start, stop) of `strategy`
        rewritten; None when the rewrite is impossible, its result does not verify or is
        not smaller."""
        with self.context, ir.Location.unknown():
            module = self._module()
            items = strategy.items(module)
            if not strategy.apply(module, items[start:stop]) or not is_valid(module):
                return None
            text = module.operation.get_asm()
        checked = checked_module(text, self.context)
        if checked is None:
            return None
        size = self._size(checked, text)
        return (text, size) if size < self.size else None

    def interesting(self, text: str) -> bool:
        if text not in self.tested:
            self.tested[text] = self.tester.interesting(text)
        return self.tested[text]

    def delta(self, strategy: Strategy) -> bool:
        """Applies `strategy` to chunks of halving size; whether anything was kept."""
        changed = False
        chunk = total = self.count(strategy)
        while chunk >= 1 and total:
            start = 0
            while start < total:
                found = self.candidate(strategy, start, min(start + chunk, total))
                if found is not None and self.interesting(found[0]):
                    (self.text, self.size), changed = found, True
                    self.progress(self.size[0])
                    total = self.count(strategy)  # the kept items moved down: same start
                else:
                    start += chunk
            chunk //= 2
        return changed

    def run(self) -> str:
        while any([self.delta(s) for s in STRATEGIES]):  # every strategy, every round
            pass
        return self.text


def reduce(text: str, tester: Tester, progress=lambda ops: None,
           allow_unregistered: bool = False) -> str:
    """The smallest interesting module `Reducer` finds from module text `text`.

    Raises:
      ParseError, VerificationError: `text` does not parse or verify.
      ToolError: the test cannot be run, or does not find `text` interesting.
    """
    context = make_context()
    context.allow_unregistered_dialects = allow_unregistered
    context.attach_diagnostic_handler(lambda d: True)  # errors arrive via MLIRError
    with context, ir.Location.unknown():
        module = parse_module(text)  # a located ParseError for input that does not parse
        verifier.check(module)  # and a VerificationError for input that does not verify
        text = module.operation.get_asm()
    tester.check_script()
    if not tester.interesting(text):
        raise ToolError(f"the input is not interesting: '{tester.script}' exited with status 0 "
                        "on it (mlir-reduce's convention: exit with 1 when the module shows "
                        "the problem, 0 when not)")
    reducer = Reducer(text, tester, context, progress)
    progress(reducer.size[0])
    try:
        return reducer.run()
    except KeyboardInterrupt:
        raise Interrupted(reducer.text) from None


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a reduction; `best` is the smallest interesting module found so far."""

    def __init__(self, best: str):
        super().__init__("interrupted")
        self.best = best


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ember-reduce", description=(
        "Shrinks a .mlir file while an interestingness test still finds it interesting "
        "(mlir-reduce's convention: the test runs as SCRIPT [ARG ...] FILE and exits with 1 "
        "when FILE is interesting, 0 when not)."))
    p.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' for stdin)")
    p.add_argument("--test", metavar="SCRIPT",
                   help="interestingness test, run as SCRIPT [ARG ...] FILE; exit status 1: "
                        "interesting, 0: not")
    p.add_argument("--test-arg", action="append", default=[], metavar="ARG",
                   help="an argument for the test, before the file (repeatable)")
    p.add_argument("-reduction-tree", "--reduction-tree", metavar="OPTIONS",
                   help="mlir-reduce's spelling: 'traversal-mode=0 test=SCRIPT test-arg=A,B'")
    p.add_argument("-o", dest="output", default="-", help="output file ('-' for stdout)")
    p.add_argument("--allow-unregistered-dialect", action="store_true",
                   help="accept operations of dialects that are not registered")
    p.add_argument("--debug", action="store_true",
                   help="show the Python traceback of an internal error")
    return p


class Progress:
    """`ember-reduce: ops: 200 -> 57 -> 9` on stderr, one count at a time."""

    def __init__(self, stream):
        self.stream = stream
        self.last = None

    def __call__(self, ops: int) -> None:
        if self.last is None:
            self.stream.write(f"ember-reduce: ops: {ops}")
        elif ops != self.last:
            self.stream.write(f" -> {ops}")
        self.last = ops
        self.stream.flush()

    def finish(self, tests: int) -> None:
        """Ends the line (once) with the number of tests run."""
        if self.last is not None:
            self.stream.write(f" ({tests} tests)\n")
            self.stream.flush()
        self.last = None


def reduction_tree_options(spec: str) -> tuple[str, list[str]]:
    """(test, test args) from mlir-reduce's `-reduction-tree='traversal-mode=0 test=SCRIPT
    test-arg=A,B'` (the reduction-tree pass's options; only traversal mode 0, single path,
    exists upstream)."""
    test, test_args = "", []
    try:
        words = shlex.split(spec)
    except ValueError as e:
        raise ToolError(f"invalid -reduction-tree options '{spec}': {e}") from None
    for word in words:
        key, eq, value = word.partition("=")
        if key == "test" and eq:
            test = value
        elif key == "test-arg" and eq:
            test_args += [a.strip() for a in value.split(",") if a.strip()]
        elif key == "traversal-mode" and eq:
            if value.strip() != "0":
                raise ToolError(f"-reduction-tree: traversal-mode={value} is not supported; "
                                "only 0 (single path) is, as in mlir-reduce")
        else:
            raise ToolError(f"-reduction-tree: unknown option '{word}'; expected "
                            "traversal-mode=0, test=SCRIPT or test-arg=A,B")
    return test, test_args


def _test_command(args) -> tuple[str, list[str]]:
    test, test_args = args.test or "", list(args.test_arg)
    if args.reduction_tree is not None:
        tree_test, tree_args = reduction_tree_options(args.reduction_tree)
        if test and tree_test:
            raise ToolError("the test is given twice (--test and -reduction-tree='test=...'); "
                            "give it once")
        test, test_args = test or tree_test, tree_args + test_args
    if not test:
        raise ToolError("no interestingness test: give --test SCRIPT (or mlir-reduce's "
                        "-reduction-tree='test=SCRIPT')")
    return test, test_args


def run(args) -> int:
    test, test_args = _test_command(args)
    text = read_input(args.input)
    progress = Progress(sys.stderr)
    with tempfile.TemporaryDirectory(prefix="ember-reduce-") as workdir:
        tester = Tester(test, test_args, workdir)
        try:
            result = reduce(text, tester, progress, args.allow_unregistered_dialect)
        except Interrupted as e:  # keep what the tests so far have bought (exit status 130)
            progress.finish(tester.runs)
            _write(args.output, e.best)
            print("ember-reduce: interrupted: wrote the smallest interesting module found so "
                  "far", file=sys.stderr)
            raise
        finally:
            progress.finish(tester.runs)
    _write(args.output, result)
    return 0


def _write(output: str, text: str) -> None:
    write_output(output, text if text.endswith("\n") else text + "\n")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    return run_tool("ember-reduce", lambda: run(args), name, args.debug)


if __name__ == "__main__":
    sys.exit(main())
