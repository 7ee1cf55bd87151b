"""Vector variants of fastmath's sin and cos, so that large arguments cost only when present.

fastmath's f32 `sin`/`cos` are exact for every float: lanes with |x| >= 2**28 need
Payne-Hanek's argument reduction (sincos_reduction.py), and a branchless loop body computes
it for every element, about half of the kernel's instructions (bench case C: 2.5x slower than
without). A scalar branch cannot help: LLVM's vectoriser turns it into a select again.
Below 2**20 (fastmath_sincos.SMALL) a reduction in f32 with fused multiply-adds is as
accurate and far cheaper than the f64 one (no conversions, half the vectors). So the full
tier hands the vectoriser whole-vector versions of the two functions, in which a branch
looks at all lanes at once:

    __ember_sin_f32_v16(x: vector<16xf32>):
        if any lane of x has |x| >= 2**20, or is inf or NaN (beyond_small):
            if any lane is large, inf or NaN (large_arguments):  exact kernel
            else:                                Cody-Waite in f64 (sincos_moderate)
        else:                                    Cody-Waite in f32 (sincos_small)

Every side gives the same bits for the lanes it is meant for, so results do not depend
on which path a vector took; on targets with FMA the f64 side fuses two of Cody-Waite's
exact steps (fastmath_sincos._cody_waite, same bits). The mechanism is LLVM's vector
function ABI:

1. `add` (before the LLVM stage, on func.func): each `@__ember_{sin,cos}_f32` of the module
   (fastmath.call's) loses `alwaysinline`, gets `noinline` and the attribute
   `vector-function-abi-variant` naming `@__ember_sin_f32_v<N>` (`_m<N>`, masked, where
   loops have masked tails: AVX-512) for the target's vector width; the variant is built
   next to it, public (external linkage), so that LLVM keeps it until the vectoriser has
   used it.
2. LLVM's O3 vectorises each loop calling the scalar function with calls of a variant.
3. `finish` (after O3, on the llvmlite module): the variants are inlined into the loops
   (always-inline), made internal and deleted; a scalar remainder, or a loop LLVM left
   scalar, keeps calling the scalar function.

Only with vectorisation on (the full tier); the fast tier keeps the always-inline scalar
function. The variants exist only in the CPU backend: other backends compile fastmath's
branchless scalar function.

f32 `tanh` gets a variant by the same mechanism (`_paths`): a vector whose lanes all have
|x| < 0.625 computes only fastmath's small-|x| polynomial (`tanh_moderate`); one with any
other lane (or NaN) the whole kernel, e**(2|x|) and its division included. Bench case B
takes the polynomial alone in 49 of its 50 steps: 2.5x fewer instructions in its kernel.
"""

from __future__ import annotations

import re

from mlir import ir
from mlir.dialects import arith, func, llvm, scf

from ember.passes.conversions.ember_to_linalg import fastmath, fastmath_sincos

__all__ = ["add", "finish", "lanes_for"]

_SCALAR = re.compile(r"__ember_(sin|cos|tanh)_f32")
_VARIANT = re.compile(r"__ember_(sin|cos|tanh)_f32_[vm]\d+")
_MARK = "_ZGV_LLVM_"


def lanes_for(features: str | None) -> list[int]:
    """Vector widths (f32 lanes) of the variants for a target with `features`: its widest
    vector of f32, which LLVM picks for loops of f32 (a loop it vectorises narrower calls
    the scalar function per lane; each width would be another copy of the kernel for LLVM
    to optimise)."""
    flags = set((features or "").split(","))
    if "+avx512f" in flags:
        return [16]
    if "+avx" in flags:
        return [8]
    return [4]


def add(module: ir.Module, features: str | None, masked: bool) -> int:
    """Step 1 (see the module doc), in the module's context under a location; `masked`:
    the loops have masked tails (backend.fold_loop_tails). Returns how many scalar
    functions got variants."""
    fma = "+fma" in (features or "").split(",")
    count = 0
    for op in list(module.body.operations):
        op = op.operation
        if op.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        match = _SCALAR.fullmatch(name)
        if match is None or not op.regions[0].blocks:
            continue
        mappings = []
        with ir.InsertionPoint(module.body):
            for lanes in lanes_for(features):
                # with masked tails, LLVM calls the masked variant for every vector (an
                # all-true mask where no tail is left): one variant, one copy to optimise
                variant = f"{name}_{'m' if masked else 'v'}{lanes}"
                _build(variant, lanes, match.group(1), masked, fma)
                mappings.append(f"{_MARK}{'M' if masked else 'N'}{lanes}v_{name}({variant})")
        op.attributes["passthrough"] = ir.ArrayAttr.get([
            ir.StringAttr.get("noinline"),
            ir.ArrayAttr.get([ir.StringAttr.get("vector-function-abi-variant"),
                              ir.StringAttr.get(",".join(mappings))])])
        count += 1
    return count


def _build(name: str, lanes: int, function: str, masked: bool, fma: bool) -> None:
    """The variant `name` of `function` ("sin", "cos" or "tanh"): of (x) or, `masked`, of
    (x, mask), whose inactive lanes (a loop's masked tail) are computed as 0, so that what
    they hold never takes the slow path; `fma`: the target has fused multiply-adds (sin and
    cos's Cody-Waite steps use them where they round alike)."""
    vt = ir.VectorType.get([lanes], ir.F32Type.get())
    mt = ir.VectorType.get([lanes], ir.IntegerType.get_signless(1))
    fn = func.FuncOp(name, ([vt, mt] if masked else [vt], [vt]))
    fn.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("alwaysinline")])
    entry = fn.add_entry_block()
    with ir.InsertionPoint(entry):
        x = entry.arguments[0]
        if masked:
            zero = arith.ConstantOp(vt, ir.DenseElementsAttr.get_splat(
                vt, ir.FloatAttr.get(ir.F32Type.get(), 0.0))).result
            x = arith.SelectOp(entry.arguments[1], x, zero).result
        cheapest, levels = _paths(function, x, fma)
        func.ReturnOp([_choose(vt, lanes, cheapest, levels)])


def _choose(vt, lanes: int, cheapest, levels):
    """The kernel `cheapest` builds where no lane of the vector is in the mask of
    `levels[0]` (an i1 per lane), else, recursively, `levels[0]`'s kernel with the
    remaining levels: one branch per level, on all lanes at once."""
    if not levels:
        return cheapest()
    (mask, kernel), rest = levels[0], levels[1:]
    lanes_int = ir.IntegerType.get_signless(lanes)
    bits = llvm.BitcastOp(lanes_int, mask()).result
    zero = arith.ConstantOp(lanes_int, ir.IntegerAttr.get(lanes_int, 0)).result
    branch = scf.IfOp(arith.CmpIOp(arith.CmpIPredicate.ne, bits, zero).result, [vt],
                      has_else=True)
    with ir.InsertionPoint(branch.then_block):
        scf.YieldOp([_choose(vt, lanes, kernel, rest)])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([cheapest()])
    return branch.results[0]


def _paths(function: str, x, fma: bool):
    """(a builder of the cheapest kernel of `function` at `x`, [(a builder of the i1 per
    lane that needs more than the kernel before, a builder of that kernel), ...]), the
    last kernel exact for every lane; each gives the same bits as the exact kernel on the
    lanes it is meant for."""
    if function == "tanh":  # tanh_moderate: the polynomial of |x| < 0.625 only (no e**2x)
        return (lambda: fastmath.tanh_moderate(x),
                [(lambda: fastmath.tanh_large_arguments(x), lambda: fastmath.tanh(x))])
    cosine = function == "cos"
    return (lambda: fastmath_sincos.sincos_small(x, cosine),
            [(lambda: fastmath_sincos.beyond_small(x),
              lambda: fastmath_sincos.sincos_moderate(x, cosine, fma)),
             (lambda: fastmath_sincos.large_arguments(x),
              lambda: fastmath_sincos.cos(x) if cosine else fastmath_sincos.sin(x))])


def present(llvm_ir: str) -> bool:
    """Whether LLVM IR text has variants (`finish` has work)."""
    return _MARK in llvm_ir


def finish(mod, binding, pass_builder) -> None:
    """Step 3 on llvmlite module `mod` after O3: inline the variants, delete them."""
    pm = binding.create_new_module_pass_manager()
    pm.add_always_inliner_pass()
    pm.run(mod, pass_builder)
    for fn in mod.functions:
        if _VARIANT.fullmatch(fn.name):
            fn.linkage = "internal"
    pm = binding.create_new_module_pass_manager()
    pm.add_global_dead_code_eliminate_pass()
    pm.add_simplify_cfg_pass()
    pm.run(mod, pass_builder)
