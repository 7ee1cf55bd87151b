"""Host calls in compiled code: the IR side (host_calls.py is the runtime side).

A traced host call (`em.py_function`, a dataset loop's `__dataset_next`, printing to a
Python stream: frontend/effects.py `emit_host_call`) is a `func.call` of a private
declaration that has no body. `check` says whether the CPU backend can compile one (every
operand and result of known rank and not unsigned; other calls run on the interpreter,
quietly: NotCompilable HOST_ONLY). After `convert-ember-to-linalg`, `lower` rewrites each call

    %r:2 = func.call @__dataset_next_2(%t) : (tensor<i64>) -> (tensor<i1>, tensor<?x2xf32>)

into a call of `@ember_host_<hash>` (host_calls.host_symbol: the arguments' and results'
types, and the ABI) on buffers, with a control block `%ctl` (two i64: the site, which the
runtime maps to this function's Python callable, and a status the callback writes):

    memref.store %site, %ctl[0]
    %a = bufferization.to_buffer %t read_only : tensor<i64> to memref<i64, strided<[], offset: ?>>
    %m:2 = func.call @ember_host_<hash>(%ctl, %a) : (...) -> (memref<i1>, memref<?x2xf32>)
    %status = memref.load %ctl[1]
    scf.if %status != 0 { func.call @ember_error_<k>(%status) }  // unwinds (native.py)
    %r0 = bufferization.to_tensor %m#0 restrict writable ...

The declaration carries `llvm.emit_c_interface`, so the LLVM lowering calls
`_mlir_ciface_ember_host_<hash>(results*, ctl*, args*...)`. The results are buffers the
callback malloc'ed and hands over: the function boundary ABI makes the caller their owner,
and ownership-based deallocation frees them (with `free`) like its own allocations.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, func, memref, scf

from ember.backends.base import NotCompilable
from ember.backends.cpu.host_calls import host_symbol
from ember.dialects.ember.convert import type_from_mlir
from ember.dialects.ember.types import TensorType
from ember.dialects.ember.verifier import iter_ops, where
from ember.passes.conversions.runtime_attrs import ERROR_PREFIX, SITE_ATTRS
from ember.passes.ir_utils import symbol_table


def host_callee(op: ir.Operation, symbols: dict) -> str | None:
    """The declaration `op` calls if it is a host call (a `func.call` of a function
    without body), else None."""
    if op.name != "func.call":
        return None
    callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
    decl = symbols.get(callee)
    if decl is None or decl.name != "func.func" or decl.regions[0].blocks:
        return None
    return callee


def check(module: ir.Module, fn: ir.Operation) -> list[dict]:
    """The host-call sites of `fn` (one per callee, in order of first call: callee, label,
    ember argument and result types), or NotCompilable HOST_ONLY naming a call that cannot
    be compiled (a type of unknown rank, or a call of a function with a body)."""
    symbols = symbol_table(module)
    sites: dict[str, dict] = {}
    for op in iter_ops(fn):
        if op.name != "func.call":
            continue
        callee = host_callee(op, symbols)
        if callee is None:
            raise NotCompilable(f"'{op.name}' (at {where(op.location)}) runs on the host",
                                NotCompilable.Reason.HOST_ONLY)
        types = []
        for kind, values in (("argument", op.operands), ("result", op.results)):
            for i, value in enumerate(values):
                t = type_from_mlir(value.type)
                if not isinstance(t, TensorType) or t.shape is None:
                    raise NotCompilable(
                        f"host call @{callee} (at {where(op.location)}): its {kind} {i} "
                        f"has type {t}, of unknown rank, so it runs on the interpreter",
                        NotCompilable.Reason.HOST_ONLY)
                if t.dtype.kind == "uint":  # the call would keep types the lowering drops
                    raise NotCompilable(
                        f"host call @{callee} (at {where(op.location)}): its {kind} {i} "
                        f"has unsigned type {t}, so it runs on the interpreter",
                        NotCompilable.Reason.HOST_ONLY)
                types.append((kind, str(t)))
        args = [t for kind, t in types if kind == "argument"]
        results = [t for kind, t in types if kind == "result"]
        if callee not in sites:
            sites[callee] = {"callee": callee, "label": _label(callee), "args": args,
                             "results": results, "where": where(op.location)}
        elif (sites[callee]["args"], sites[callee]["results"]) != (args, results):
            raise NotCompilable(f"host call @{callee} is called with different types "
                                f"(at {where(op.location)})", NotCompilable.Reason.HOST_ONLY)
    out = []
    for site in sites.values():
        site["symbol"] = host_symbol(site["args"], site["results"])
        out.append(site)
    return out


def _label(callee: str) -> str:
    """`py_function` of `__py_function_3`: the op an error of the call names."""
    return callee.strip("_").rsplit("_", 1)[0] or callee


def _strided(t: ir.RankedTensorType) -> ir.Type:
    dims = "".join(("?" if ir.ShapedType.is_dynamic_size(d) else str(d)) + "x"
                   for d in t.shape)
    layout = ", ".join("?" for _ in t.shape)
    return ir.Type.parse(f"memref<{dims}{t.element_type}, strided<[{layout}], offset: ?>>")


def _identity(t: ir.RankedTensorType) -> ir.Type:
    return ir.MemRefType.get(t.shape, t.element_type)


def lower(module: ir.Module, symbol: str, sites: list[dict]) -> None:
    """Rewrites the host calls of `@symbol` (after convert-ember-to-linalg) as the module
    docstring shows; `sites` are `check`'s, in the order of their site numbers."""
    if not sites:
        return
    symbols = symbol_table(module)
    fn = symbols[symbol]
    index = {site["callee"]: k for k, site in enumerate(sites)}
    calls = [op for op in iter_ops(fn) if host_callee(op, symbols) in index]
    i64, idx = ir.IntegerType.get_signless(64), ir.IndexType.get()
    entry = fn.regions[0].blocks[0]
    with ir.InsertionPoint.at_block_begin(entry), ir.Location.unknown():
        ctl = memref.AllocaOp(ir.MemRefType.get([2], i64), [], []).result
    declared: dict[str, str] = {}
    for op in calls:
        callee = host_callee(op, symbols)
        site = sites[index[callee]]
        name = site["symbol"]
        with ir.InsertionPoint(op), op.location:
            args = [_to_buffer(v) for v in op.operands]
            if name not in declared:
                declared[name] = name
                _declare(module, name, [ctl.type] + [a.type for a in args],
                         [_identity(r.type) for r in op.results])
            error = _error_site(module, site, op.location)
            zero = arith.ConstantOp(idx, 0).result
            one = arith.ConstantOp(idx, 1).result
            memref.StoreOp(arith.ConstantOp(i64, index[callee]).result, ctl, [zero])
            call = func.CallOp([_identity(r.type) for r in op.results],
                               ir.FlatSymbolRefAttr.get(name), [ctl] + args)
            status = memref.LoadOp(ctl, [one]).result
            failed = arith.CmpIOp(arith.CmpIPredicate.ne, status,
                                  arith.ConstantOp(i64, 0).result).result
            branch = scf.IfOp(failed)
            with ir.InsertionPoint(branch.then_block):
                func.CallOp([], ir.FlatSymbolRefAttr.get(error), [status])
                scf.YieldOp([])
            for old, new in zip(op.results, call.results):
                tensor = ir.Operation.create(
                    "bufferization.to_tensor", results=[old.type], operands=[new],
                    attributes={"restrict": ir.UnitAttr.get(),
                                "writable": ir.UnitAttr.get()}).result
                old.replace_all_uses_with(tensor)
        op.erase()
    for name, decl in symbols.items():  # the traced declarations are called no more
        if name.startswith("__") and decl.name == "func.func" and \
                not decl.regions[0].blocks and not _called(module, name):
            decl.erase()


def _called(module: ir.Module, name: str) -> bool:
    found = []

    def visit(op):
        if op.name == "func.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value \
                == name:
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return bool(found)


def _to_buffer(value: ir.Value) -> ir.Value:
    return ir.Operation.create("bufferization.to_buffer", results=[_strided(value.type)],
                               operands=[value],
                               attributes={"read_only": ir.UnitAttr.get()}).result


def _declare(module: ir.Module, name: str, inputs: list, results: list) -> None:
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        decl = func.FuncOp(name, ir.FunctionType.get(inputs, results), visibility="private")
    decl.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()


def _error_site(module: ir.Module, site: dict, location: ir.Location) -> str:
    """A fresh `@ember_error_<k>(i64)` for a host call: it unwinds the native call when the
    callback failed (the runtime then raises the callback's own exception; the site's
    message is for a callback that ran without its callables bound)."""
    taken = set(symbol_table(module))
    k = 0
    while f"{ERROR_PREFIX}{k}" in taken:
        k += 1
    name = f"{ERROR_PREFIX}{k}"
    with ir.InsertionPoint.at_block_begin(module.body), ir.Location.unknown():
        decl = func.FuncOp(name, ir.FunctionType.get([ir.IntegerType.get_signless(64)], []),
                           visibility="private")
    message = (f"the host callback @{site['callee']} of this compiled function failed, or "
               "ran without the function's Python callables (status {})")
    for key, text in zip(SITE_ATTRS, ("InvalidArgumentError", site["label"], message,
                                      where(location))):
        decl.attributes[key] = ir.StringAttr.get(text)
    return name
