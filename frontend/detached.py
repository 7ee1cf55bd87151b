"""Detached ops that regions are traced into (a loop's body, a branch, a trial trace) before
they are moved into their real op: what makes dropping one safe.

A branch or loop body is traced into the blocks of an op that is not in the function yet
(control_flow.py, while_loop.py): its ops use the function's values. MLIR aborts the process
when it destroys an op whose results are still used ("operation destroyed but still has
uses"), so a detached op that outlives the module whose values it uses is fatal when that
module goes first. That happens when tracing the region fails (or a trial trace is dropped)
and the garbage collector, clearing a cycle that holds both (a saved exception's traceback,
a tape's records), frees the module before the op. (A trial trace's op kept alive also
failed the bytecode writer's assertions on a compile: its uses are the function's values'.)
`cut(op)` makes every use its ops make of a value defined outside it a use of a new block
argument instead: then op and module may go in either order. Nothing reads the IR of an
abandoned region afterwards.
"""

from __future__ import annotations

import contextlib

from mlir import ir


def _outermost(op: ir.Operation) -> ir.Operation:
    while True:
        parent = op.parent
        if parent is None:
            return op
        op = parent.operation


def cut(owner) -> None:
    """Rewires the operands of every op nested in detached op `owner` that are defined
    outside it to new arguments of the first block of the region of `owner` they are in
    (see the module docstring; a region drops the uses its own ops make before its blocks
    go, but not those of another region's ops)."""
    owner = owner.operation
    with owner.context:
        for region in owner.regions:
            blocks = list(region.blocks)
            if not blocks:
                continue

            def visit(op: ir.Operation, entry=blocks[0]):
                for value in list(op.operands):
                    defined = value.owner
                    if isinstance(defined, ir.Block):  # a block argument: its block's op
                        defined = defined.owner
                    if _outermost(defined.operation) != owner:
                        op.replace_uses_of_with(value, entry.add_argument(value.type,
                                                                          value.location))
                return ir.WalkResult.ADVANCE
            for block in blocks:
                for op in block.operations:
                    op.operation.walk(visit)


@contextlib.contextmanager
def abandoned_on_error(owner):
    """Cuts `owner` (`cut`) if the code inside raises, before the error propagates."""
    try:
        yield owner
    except BaseException:
        cut(owner)
        raise
