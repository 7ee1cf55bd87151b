"""Print symbols of compiled code are named after what they print.

MCJIT resolves an external symbol process-wide and compiled objects reach other processes
through the disk cache, so a print symbol must mean one printer in every process: equal
sites share one symbol, different sites never do, and no counter or address takes part.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from mlir import ir

from ember.backends.cpu import host
from ember.passes.pipeline import run_pipeline

_SITES = """
func.func @print(%x: tensor<3xui8>, %d: tensor<?x2xf32>) {
  "ember.print"(%x) {end = "\\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xui8>) -> ()
  "ember.print"(%d) {end = "", format = "{}", stream = "stdout", summarize = 3 : i64} : (tensor<?x2xf32>) -> ()
  "ember.print"(%x) {end = "\\0A", format = "x = {}", stream = "stderr", summarize = 3 : i64} : (tensor<3xui8>) -> ()
  return
}
"""


def _renamed(text: str) -> tuple[list[dict], ir.Module]:
    module = ir.Module.parse(text)
    run_pipeline(module, "builtin.module(convert-ember-to-linalg)", verify_each=False)
    return host.rename_prints(module), module


def test_equal_sites_share_a_symbol_named_after_what_they_print(context):
    sites, module = _renamed(_SITES)
    again, _ = _renamed(_SITES)  # as another process would compile it: the same names
    assert [s["symbol"] for s in sites] == [s["symbol"] for s in again]
    assert len(sites) == 2 and sites[0]["symbol"] != sites[1]["symbol"]
    assert all(s["symbol"] == host.print_symbol(s) for s in sites)
    ops = [op.operation for op in module.body.operations]
    fn = next(op for op in ops if ir.StringAttr(op.attributes["sym_name"]).value == "print")
    callees = [ir.FlatSymbolRefAttr(op.attributes["callee"]).value
               for op in fn.regions[0].blocks[0].operations
               if op.operation.name == "func.call"]
    assert callees == [sites[0]["symbol"], sites[1]["symbol"], sites[0]["symbol"]]
    declared = [ir.StringAttr(op.attributes["sym_name"]).value
                for op in ops if "ember.format" in op.attributes]
    assert declared == [s["symbol"] for s in sites]


@pytest.mark.parametrize("key, other", [("format", "y = {}"), ("end", ""),
                                        ("stream", "stdout"), ("type", "tensor<3xi8>"),
                                        ("summarize", -1)])
def test_sites_that_print_differently_get_different_symbols(key, other):
    site = {"format": "x = {}", "end": "\n", "stream": "stderr", "type": "tensor<3xui8>",
            "summarize": 3}
    assert host.print_symbol(site) != host.print_symbol({**site, key: other})


def test_an_object_whose_symbol_names_another_printer_is_refused():
    site = {"format": "x = {}", "end": "\n", "stream": "stderr", "type": "tensor<3xf32>",
            "summarize": 3}
    other = {**site, "format": "y = {}"}
    with pytest.raises(host.PrintBindingError, match="does not name the printer"):
        host.bind_print({**site, "symbol": host.print_symbol(other)})


# Prints of 24 functions (each its own label, dtype and shape) compiled in one process, and
# in another process loaded from the disk cache in reverse order after 24 other functions
# with prints were compiled there: each must print its own text, as eager execution does.
_SCRIPT = '''
import sys
import numpy as np
import ember as em

DTYPES = [np.float32, np.int32, np.float64, np.int64, np.bool_, np.uint8]


def make(prefix, i):
    shape = [(3,), (2, 2), (), (5,)][i % 4]
    def fn(x):
        em.print(f"{prefix}{i}:", x, output_stream=sys.stdout)
        return x
    fn.__name__ = fn.__qualname__ = f"{prefix}{i}"  # the traced symbol: same in each process
    value = (np.arange(int(np.prod(shape))).reshape(shape) + i) % 7
    return em.function(fn), em.constant(value.astype(DTYPES[i % len(DTYPES)]))


def run(prefix, order):
    pairs = [make(prefix, i) for i in range(24)]
    for i in order:
        function, x = pairs[i]
        function(x)


mode = sys.argv[1]
em.config.run_functions_eagerly(mode == "eager")
if mode != "first":
    run("othr", range(24))
run("site", range(24) if mode == "first" else range(23, -1, -1))
'''


def test_prints_loaded_from_the_disk_cache_print_their_own_text(tmp_path):
    script = tmp_path / "prints.py"
    script.write_text(_SCRIPT)
    cache = tmp_path / "cache"
    env = dict(os.environ, EMBER_CACHE_DIR=str(cache))

    def run(mode: str) -> str:
        done = subprocess.run([sys.executable, str(script), mode], capture_output=True,
                              text=True, timeout=300, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    def entries() -> int:  # compiled code (not the host and source records beside it)
        return sum(1 for p in Path(cache).rglob("*.obj") if p.is_file())

    run("first")
    first = entries()
    second = run("second")
    assert first >= 24 and entries() == first + 24  # only the 24 new functions compiled:
    # the rest, and a runtime their code may share (block_cache's pool), were loaded
    assert second == run("eager")
    assert second.count("site") == 24 and second.count("othr") == 24
