"""The error runtime's IR (native.py describes the mechanism): `install` adds it to an
LLVM-dialect module (the pthread key, libc's declarations, `ember_rt_fail`, the checked
allocator and each error site's definition), and `error_sites` reads the sites the
compiler stores in an entry's metadata. Only a compile needs them: a cache hit imports
native.py alone.
"""

from __future__ import annotations

from mlir import ir

from ember.backends.cpu.native import (DETAIL_OFFSET, FAIL, FIRST_SITE, KEY_SYMBOL, MALLOC,
                                       MAX_VALUES, OUT_OF_MEMORY)
from ember.passes.ir_utils import symbol_name, symbol_table

_DECLARATIONS = {
    "_setjmp": 'llvm.func @_setjmp(!llvm.ptr) -> i32 attributes {passthrough = '
               '["returns_twice"]}',
    "longjmp": 'llvm.func @longjmp(!llvm.ptr, i32) attributes {passthrough = ["noreturn"]}',
    "abort": 'llvm.func @abort() attributes {passthrough = ["noreturn"]}',
    "malloc": "llvm.func @malloc(i64) -> !llvm.ptr",
    "pthread_getspecific": "llvm.func @pthread_getspecific(i32) -> !llvm.ptr",
    "pthread_setspecific": "llvm.func @pthread_setspecific(i32, !llvm.ptr) -> i32",
    KEY_SYMBOL: f"llvm.mlir.global external @{KEY_SYMBOL}(-1 : i32) : i32",
}

_FAIL = f"""
llvm.func internal @{FAIL}(%status: i32, %value: i64)
    attributes {{passthrough = ["noreturn", "cold", "noinline"]}} {{
  %key_at = llvm.mlir.addressof @{KEY_SYMBOL} : !llvm.ptr
  %key = llvm.load %key_at : !llvm.ptr -> i32
  %context = llvm.call @pthread_getspecific(%key) : (i32) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %lost = llvm.icmp "eq" %context, %null : !llvm.ptr
  llvm.cond_br %lost, ^abort, ^unwind
^abort:
  llvm.call @abort() : () -> ()
  llvm.unreachable
^unwind:
  %slot = llvm.getelementptr %context[{DETAIL_OFFSET}] : (!llvm.ptr) -> !llvm.ptr, i8
  llvm.store %value, %slot : i64, !llvm.ptr
  llvm.call @longjmp(%context, %status) : (!llvm.ptr, i32) -> ()
  llvm.unreachable
}}
"""

_MALLOC = f"""
llvm.func internal @{MALLOC}(%size: i64) -> !llvm.ptr {{
  %p = llvm.call @malloc(%size) : (i64) -> !llvm.ptr
  %null = llvm.mlir.zero : !llvm.ptr
  %failed = llvm.icmp "eq" %p, %null : !llvm.ptr
  %zero = llvm.mlir.constant(0 : i64) : i64
  %some = llvm.icmp "ne" %size, %zero : i64
  %out = llvm.and %failed, %some : i1
  llvm.cond_br %out, ^fail, ^ok
^fail:
  %status = llvm.mlir.constant({OUT_OF_MEMORY} : i32) : i32
  llvm.call @{FAIL}(%status, %size) : (i32, i64) -> ()
  llvm.unreachable
^ok:
  llvm.return %p : !llvm.ptr
}}
"""

_SITE = """
llvm.func internal @{name}(%value: i64) attributes {{passthrough = ["noreturn", "cold"]}} {{
  %status = llvm.mlir.constant({status} : i32) : i32
  llvm.call @{fail}(%status, %value) : (i32, i64) -> ()
  llvm.unreachable
}}
"""


def _site_of_many(name: str, status: int, count: int) -> str:
    """A site reporting `count` values: stores values 1.. in the context's further slots,
    then fails with value 0 (which `ember_rt_fail` stores in the first)."""
    params = ", ".join(f"%v{k}: i64" for k in range(count))
    lines = [f"llvm.func internal @{name}({params}) "
             'attributes {passthrough = ["noreturn", "cold"]} {',
             f"  %key_at = llvm.mlir.addressof @{KEY_SYMBOL} : !llvm.ptr",
             "  %key = llvm.load %key_at : !llvm.ptr -> i32",
             "  %context = llvm.call @pthread_getspecific(%key) : (i32) -> !llvm.ptr",
             "  %null = llvm.mlir.zero : !llvm.ptr",
             "  %lost = llvm.icmp \"eq\" %context, %null : !llvm.ptr",
             "  llvm.cond_br %lost, ^abort, ^store",
             "^abort:",
             "  llvm.call @abort() : () -> ()",
             "  llvm.unreachable",
             "^store:"]
    for k in range(1, min(count, MAX_VALUES)):
        lines += [f"  %at{k} = llvm.getelementptr %context[{DETAIL_OFFSET + 8 * k}] : "
                  "(!llvm.ptr) -> !llvm.ptr, i8",
                  f"  llvm.store %v{k}, %at{k} : i64, !llvm.ptr"]
    lines += [f"  %status = llvm.mlir.constant({status} : i32) : i32",
              f"  llvm.call @{FAIL}(%status, %v0) : (i32, i64) -> ()",
              "  llvm.unreachable", "}"]
    return "\n".join(lines) + "\n"


def _arity(op: ir.Operation) -> int:
    """How many i64 values an error site's declaration takes (`llvm.func`)."""
    text = str(ir.TypeAttr(op.attributes["function_type"]).value)
    return text[text.index("("):].count("i64")


def install(module: ir.Module) -> None:
    """Adds the error runtime to an LLVM-dialect module (in its context): the key, the
    libc declarations the entry wrapper and `ember_rt_fail` need, `ember_rt_fail`, the
    checked allocator (every call of `malloc` retargeted to it) and each error site's
    definition."""
    from ember.passes.conversions.runtime_attrs import ERROR_PREFIX  # (a compile's)
    body = module.body
    symbols = symbol_table(module)
    if KEY_SYMBOL in symbols:
        return  # installed already
    text = list(_DECLARATIONS.values()) + [_FAIL, _MALLOC]
    for name, op in list(symbols.items()):
        if name.startswith(ERROR_PREFIX) and not op.regions[0].blocks:
            status = FIRST_SITE + int(name[len(ERROR_PREFIX):])
            count = _arity(op)
            text.append(_SITE.format(name=name, status=status, fail=FAIL) if count == 1
                        else _site_of_many(name, status, count))
            op.erase()
            del symbols[name]
    _retarget_calls(module, "malloc", MALLOC)
    runtime = ir.Module.parse("\n".join(text), module.context)
    for op in list(runtime.body.operations):
        op = op.operation
        if symbol_name(op) not in symbols:
            body.append(op)  # the module's own declarations stay


def _retarget_calls(module: ir.Module, old: str, new: str) -> None:
    callee = ir.FlatSymbolRefAttr.get(new, module.context)

    def visit(op):
        if op.name == "llvm.call" and "callee" in op.attributes and \
                ir.FlatSymbolRefAttr(op.attributes["callee"]).value == old:
            op.attributes["callee"] = callee
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)


def error_sites(module: ir.Module) -> dict[str, dict]:
    """The error sites declared in `module` (after convert-ember-to-linalg), by status
    (as a string: the metadata is JSON): error class, op, message and location. (The
    lowering's names are imported here: a cache hit loads `native` without its package.)"""
    from ember.passes.conversions.runtime_attrs import (ERROR_PREFIX, SHAPE_ATTRS, SITE_ATTRS,
                                                        VALUED_ATTR)
    sites = {}
    for op in module.body.operations:
        op = op.operation
        if op.name != "func.func" or "ember.error" not in op.attributes:
            continue
        name = symbol_name(op)
        fields = [ir.StringAttr(op.attributes[a]).value for a in SITE_ATTRS]
        site = dict(zip(("error", "op", "message", "where"), fields))
        if SHAPE_ATTRS[0] in op.attributes:  # a shape site (checks.shape_check)
            site.update(zip(("types", "attrs"), [ir.StringAttr(op.attributes[a]).value
                                                 for a in SHAPE_ATTRS]))
            if VALUED_ATTR in op.attributes:
                site["valued"] = ir.StringAttr(op.attributes[VALUED_ATTR]).value
        sites[str(FIRST_SITE + int(name[len(ERROR_PREFIX):]))] = site
    return sites
