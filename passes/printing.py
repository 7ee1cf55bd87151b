"""IR printing around passes, as MLIR's `IRPrinterInstrumentation` (`mlir-opt
--mlir-print-ir-before=cse --mlir-print-ir-after-change --mlir-print-ir-after-failure
--mlir-print-ir-module-scope`), built on the pass instrumentation (instrument.py).

    run_pipeline(module, "ember-canonicalize,cse",
                 instruments=[PrintIR(before=("cse",), after_change=True)])

Which passes print:
  - `before` / `after`: the pass names to print before / after (ALL: every pass). A name
    matches an ember pass, an upstream pass (`cse`) or any pass inside an upstream nested
    element (`cse` matches `func.func(cse)`).
  - `after_change`: after a pass only when it changed the IR: a fingerprint (a hash of the
    op's generic text) is taken before the pass and compared after it.
  - `after_failure`: after a pass failed, the IR it left, headed
    `// -----// IR Dump After <pass> Failed //----- //`.
What prints: the op the pass ran on (a `func.func` for a nested pass, printed with local
scope), or with `module_scope` the whole module, the header then naming the op as MLIR's
does: `('func.func' operation: @f)`.

Where Ember differs: MLIR heads a dump with the pass's class name and its argument
(`CSE (cse)`); the bindings do not expose class names, so an upstream pass shows its
argument only (an ember pass shows `ember-cse (ember-cse)`, as MLIR's own printing shows
it). MLIR fingerprints the op by hashing pointers and attributes; Ember hashes the printed
op, which costs a print per pass but only with `after_change`.
"""

from __future__ import annotations

import sys
from typing import Callable, Optional, TextIO

from mlir import ir

from ember.dialects.ember import digest
from ember.passes.pipeline_syntax import pass_names
from ember.passes import registry
from ember.passes.base import Statistics
from ember.passes.instrument import PassInstrumentation

ALL = "*"  # `before=ALL` / `after=ALL`: every pass


def label(name: str, suffix: str = "") -> str:
    """How a dump's header names the pass: `ember-cse (ember-cse)` for an ember pass (as
    MLIR shows a Python pass: name, then argument; `suffix` between them, as MLIR puts
    `Failed`), the element's text for an upstream one."""
    return f"{name}{suffix} ({name})" if name in registry.PASSES else name + suffix


def top_level(op: ir.Operation) -> ir.Operation:
    """The outermost op holding `op` (the module)."""
    while op.parent is not None:
        op = op.parent
    return op


def header(when: str, name: str, op: ir.Operation, module_scope: bool,
           suffix: str = "") -> str:
    """MLIR's dump header: `// -----// IR Dump After cse ('func.func' operation: @f) //----- //`
    (the op only with module scope)."""
    where = ""
    if module_scope:
        symbol = op.attributes["sym_name"] if "sym_name" in op.attributes else None
        where = f" ('{op.name}' operation" + \
            (f": @{ir.StringAttr(symbol).value}" if symbol is not None else "") + ")"
    return f"// -----// IR Dump {when} {label(name, suffix)}{where} //----- //\n"


class PrintIR(PassInstrumentation):
    """Prints the IR before/after the passes chosen (module docstring) to `stream`.

    Args:
      before, after: pass names (or ALL) to print before / after.
      after_change: print after any pass that changed the IR it ran on.
      after_failure: print the IR a failing pass left.
      module_scope: print the whole module, not only the op the pass ran on.
      stream: where to write (default: stderr at the time of writing).
      print_options: `get_asm` keywords (`print_generic_op_form`, `enable_debug_info`).
      printer: prints the whole module instead of `get_asm` (used with `module_scope`).
    """

    def __init__(self, before=(), after=(), after_change: bool = False,
                 after_failure: bool = False, module_scope: bool = False,
                 stream: Optional[TextIO] = None, print_options: Optional[dict] = None,
                 printer: Optional[Callable] = None):
        self.before, self.after = _selection(before), _selection(after)
        self.after_change, self.after_failure = after_change, after_failure
        self.module_scope = module_scope
        self.stream = stream
        self.print_options = dict(print_options or {})
        self.printer = printer
        self._fingerprints: list[Optional[str]] = []  # per open pass (nesting)

    def __bool__(self) -> bool:
        """Whether anything is asked to print (tools add the instrument only then)."""
        return bool(self.before or self.after or self.after_change or self.after_failure)

    def run_before_pass(self, name: str, op: ir.Operation) -> None:
        if _chosen(self.before, name):
            self._dump("Before", name, op)
        self._fingerprints.append(self.fingerprint(op) if self.after_change else None)

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        before = self._fingerprints.pop() if self._fingerprints else None
        if _chosen(self.after, name) or \
                self.after_change and before is not None and before != self.fingerprint(op):
            self._dump("After", name, op)

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        self._fingerprints.clear()
        if self.after_failure:
            self._dump("After", name, op, " Failed")

    def fingerprint(self, op: ir.Operation) -> str:
        """A digest of `op` as printed (generic form, no locations)."""
        text = op.get_asm(print_generic_op_form=True, binary=True)
        return digest.hexdigest(text)

    def _dump(self, when: str, name: str, op: ir.Operation, suffix: str = "") -> None:
        stream = self.stream or sys.stderr
        target = top_level(op) if self.module_scope else op
        if self.printer is not None and self.module_scope:
            body = self.printer(target)
        else:
            body = target.get_asm(use_local_scope=not self.module_scope,
                                  **self.print_options)
        stream.flush()  # MLIR's own printing writes to the same stderr, unbuffered
        # MLIR's spacing: the module's text ends with a newline, a nested op's does not
        stream.write(header(when, name, op, self.module_scope, suffix) + body.rstrip("\n")
                     + ("\n\n\n" if self.module_scope else "\n\n"))
        stream.flush()


def _selection(names) -> frozenset:
    if names == ALL or names is True:
        return frozenset([ALL])
    return frozenset(names or ())


def _chosen(selection: frozenset, name: str) -> bool:
    if not selection:
        return False
    return ALL in selection or name in selection or \
        any(n in selection for n in pass_names(name))
