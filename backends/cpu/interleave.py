"""Interleaving loops whose body is one long dependency chain (LLVM loop metadata).

A fused elementwise loop whose body chains many ops on each element (bench case B: 50 x
`tanh(x) * 0.5 + 0.1`, about 2,300 instructions a vector in one chain) runs at the chain's
latency: the next iteration's independent vector cannot start until the out-of-order
window (a few hundred instructions) reaches it, so the divider and the FMA pipes idle
between dependent ops. LLVM's vectoriser interleaves only small loops on its own. Asking it
for `INTERLEAVE` vectors per iteration (`llvm.loop.interleave.count`) gives the core that
many independent chains side by side: case B runs about 2-3x faster here. The price is
that much more machine code for such loops (and LLVM time to make it, in the full tier,
which compiles in the background). Short bodies keep LLVM's own choice: the window already
overlaps their iterations. The threshold is low enough for a loop calling sin or cos (their
chain counts 43-44) with a few ops around it: bench case C, a division and sin's vector
variant, runs about 8% faster interleaved (29.4 -> 27.0 cycles a vector, one thread, data in
L2); sin alone gains nothing but loses nothing either. exp, log, tanh and sigmoid (chains
28-36) alone stay below it.

Results are unchanged: each element goes through the same ops in the same order (no
reassociation), only the order in which elements are processed changes.
"""

from __future__ import annotations

from mlir import ir

INTERLEAVE = 4
MIN_CHAIN = 40  # dependent ops in the loop body from which it is interleaved


def _chain(block: ir.Block, callees: dict[str, int]) -> int:
    """The longest chain of dependent ops within `block` (operands defined outside count 0);
    a call of a function of the module counts as that function's own chain (`callees`: the
    fastmath functions are calls here, inlined by LLVM)."""
    depth: dict = {}
    longest = 0
    for op in block.operations:
        op = op.operation
        weight = 1
        if op.name == "llvm.call" and "callee" in op.attributes:
            weight = callees.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, 1)
        d = weight + max((depth.get(v, 0) for v in op.operands), default=0)
        for r in op.results:
            depth[r] = d
        longest = max(longest, d)
    return longest


def _callees(module: ir.Module) -> dict[str, int]:
    """The chain of each function defined in the module (its longest block's), for calls."""
    chains = {}
    for fn in module.body.operations:
        fn = fn.operation
        if fn.name == "llvm.func" and fn.regions[0].blocks:
            name = ir.StringAttr(fn.attributes["sym_name"]).value
            chains[name] = max(_chain(b, chains) for b in fn.regions[0].blocks)
    return chains


def interleave_long_chains(module: ir.Module, annotation_of_folded: str) -> int:
    """Asks LLVM to interleave `INTERLEAVE` vectors in every loop (found by its back edge,
    as backend.fold_loop_tails finds them) whose latch block holds a chain of at least
    `MIN_CHAIN` dependent ops; a loop annotated `annotation_of_folded` (masked tails) keeps
    that too. Returns how many loops it marked."""
    interleave = f"interleave = <count = {INTERLEAVE}>"
    folded = ir.Attribute.parse(annotation_of_folded)
    both = ir.Attribute.parse(annotation_of_folded[:-1] + f", {interleave}>")
    alone = ir.Attribute.parse(f"#llvm.loop_annotation<{interleave}>")
    callees = _callees(module)
    count = 0
    for block, term in loop_latches(module):
        if _chain(block, callees) < MIN_CHAIN:
            continue
        current = term.attributes["loop_annotation"] \
            if "loop_annotation" in term.attributes else None
        if current is None:
            term.attributes["loop_annotation"] = alone
        elif current == folded:
            term.attributes["loop_annotation"] = both
        else:
            continue  # someone else's annotation: left as it is
        count += 1
    return count


def loop_latches(module: ir.Module):
    """(block, branch) of each loop's latch in the module's LLVM functions: after scf-to-cf
    every loop's latch branches back to a block that comes before it."""
    for fn in module.body.operations:
        fn = fn.operation
        if fn.name != "llvm.func" or not fn.regions[0].blocks:
            continue
        blocks = list(fn.regions[0].blocks)
        position = {block: i for i, block in enumerate(blocks)}
        for i, block in enumerate(blocks):
            term = list(block.operations)[-1].operation
            if term.name in ("llvm.br", "llvm.cond_br") and \
                    any(position[s] <= i for s in term.successors):
                yield block, term
