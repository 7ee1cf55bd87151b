"""`import ember` loads no compiler: LLVM (llvmlite), MLIR's linalg bindings (their named-op
DSL alone takes ~110 ms) and the CPU backend's compiler are loaded by the first call that
compiles, so eager code and the command-line tools that lower nothing never pay for them.
It does load the CPU backend's cache-hit path (runtime/startup.py)."""

import os
import subprocess
import sys

HEAVY = ("llvmlite", "mlir.dialects.linalg", "ember.backends.cpu.backend",
         "ember.backends.cpu.jit", "ember.backends.cuda.driver")


def _output(probe: str, env: dict | None = None) -> str:
    """What the Python program `probe` prints, run in a fresh interpreter."""
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          text=True, timeout=120, check=True).stdout


def _loaded_after(code: str) -> set:
    return set(_output(f"{code}\nimport sys\n"
                       f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))").split())


def test_import_and_eager_code_load_no_backend():
    assert _loaded_after("import ember as em\n"
                         "em.errors.OpError; em.aot.load; (em.constant([1.0]) * 2).numpy()") \
        == set()


def test_import_loads_neither_openssl_nor_what_only_a_failure_needs():
    """Ember's digests come from CPython's `_blake2` (dialects/ember/digest.py): hashlib
    loads OpenSSL (~3.5 ms); json and shlex are for reproducers, written when a pipeline
    fails (passes/reproducer.py)."""
    out = _output("import ember, sys\n"
                  "print(' '.join(m for m in ('hashlib', '_hashlib', 'shlex')\n"
                  "               if m in sys.modules))")
    assert out.split() == []


def test_import_loads_the_cache_hit_path_and_fingerprints_the_compiler(tmp_path):
    """What a warm start's first call needs of Ember's own code: the hit path's modules and
    the hash of the compiler's source that keys the disk cache, taken where the cache's
    directory exists; an import makes no directory."""
    probe = ("import os, sys\nimport ember\nfrom ember.backends.cpu import cache\n"
             "print(all(m in sys.modules for m in ('ember.backends.cpu.warm',\n"
             "    'ember.backends.cpu.shared', 'ember.backends.cpu.executable')),\n"
             "    cache.compiler_fingerprint.cache_info().currsize,\n"
             "    os.path.exists(os.environ['EMBER_CACHE_DIR']))")
    for folder, made in ((tmp_path / "none", False), (tmp_path, True)):
        out = _output(probe, {**os.environ, "EMBER_CACHE_DIR": str(folder)})
        assert out.split() == ["True", "1" if made else "0", str(made)]


def test_import_loads_no_mlir_dialect_module_the_tracer_needs_no_class_of():
    """The tracer builds `scf` and `tensor` ops by name (`ir.Operation.create`): their Python
    modules, with `arith`'s that `scf`'s imports, cost `import ember` ~8 ms."""
    out = _output("import ember, sys\n"
                  "print(' '.join(m for m in ('mlir.dialects.scf', 'mlir.dialects.arith',\n"
                  "                           'mlir.dialects.tensor') if m in sys.modules))")
    assert out.split() == []


def test_data_distribute_and_debug_load_on_first_use():
    """em.data, em.distribute and em.debug (and their error classes) are imported on first
    use."""
    lazy = ("ember.runtime.data", "ember.runtime.distribute", "ember.runtime.repro_bisect")
    probe = ("import sys\nimport ember as em\n"
             f"print(' '.join(m for m in {lazy!r} if m in sys.modules))\n"
             "assert {'data', 'distribute', 'debug'} <= set(dir(em))\n"
             "print(em.data.Dataset.__name__, em.distribute.MirroredStrategy.__name__,\n"
             "      em.errors.OutOfRangeError.__name__, em.errors.UnavailableError.__name__,\n"
             "      em.debug.find_miscompile.__name__)\n"
             "from ember.data import Dataset\n"
             f"print(' '.join(m for m in {lazy!r} if m in sys.modules))\n")
    out = _output(probe).split("\n")
    assert out[0] == ""
    assert out[1] == ("Dataset MirroredStrategy OutOfRangeError UnavailableError "
                      "find_miscompile")
    assert set(out[2].split()) == set(lazy)


def test_training_aot_dlpack_bfloat16_and_the_optimizing_passes_load_on_first_use():
    """Eager code and a call whose code is cached need none of these: the training API
    (em.Module, em.optimizers, em.layers, em.losses, em.train), em.aot, em.experimental,
    ml_dtypes (bfloat16's numpy type) and the five passes ember-optimize runs."""
    lazy = ("ember.frontend.training.module", "ember.frontend.training.optimizers",
            "ember.optimizers", "ember.aot_loader", "ember.frontend.dlpack_structs",
            "ml_dtypes", "ember.passes.rewrite", "ember.passes.transforms.cse")
    probe = ("import sys\nimport ember as em\n"
             "f = em.function(lambda x: x * 2.0)\n(em.constant([1.0]) * 2).numpy()\n"
             f"print(' '.join(m for m in {lazy!r} if m in sys.modules))\n"
             "assert {'Module', 'Sequential', 'aot', 'optimizers'} <= set(dir(em))\n"
             "print(em.Module.__name__, em.Sequential.__name__, em.optimizers.SGD.__name__,\n"
             "      em.aot.load.__name__, em.experimental.dlpack.to_dlpack.__name__,\n"
             "      em.bfloat16.np_dtype, em.errors.RewriteError.__name__)\n"
             "from ember.passes.transforms.optimize import _steps\n_steps()\n"
             f"print(' '.join(m for m in {lazy!r} if m in sys.modules))\n")
    out = _output(probe).split("\n")
    assert out[0] == ""
    assert out[1] == "Module Sequential SGD load to_dlpack bfloat16 RewriteError"
    assert set(out[2].split()) == set(lazy)


def test_a_tool_loads_no_backend_until_it_lowers():
    assert _loaded_after("import ember.tools.ember_opt") == set()


def test_the_backends_errors_load_them_on_first_use():
    assert _loaded_after("import ember as em\nem.errors.JitError") >= {"ember.backends.cpu.jit"}


def test_a_call_whose_code_is_in_the_disk_cache_loads_no_lowering(tmp_path):
    """A warm start runs the cached code: its shared library through the dynamic loader
    (backends/cpu/shared.py), so neither LLVM (llvmlite) nor the lowering (MLIR's linalg
    DSL, the ember-to-linalg conversions) is loaded; where no linker made one, LLVM loads
    the cached object, and the lowering still is not loaded."""
    from ember.backends.cpu.shared import linker
    program = ("import ember as em\n"
               "f = em.function(lambda x: em.tanh(x) * 0.5 + 0.1)\n"
               "f(em.constant([1.0, 2.0])).numpy()\n")
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", program], env=env, timeout=120, check=True)
    probe = program + ("import sys\nprint(' '.join(m for m in ('llvmlite', 'mlir.dialects.linalg', "
                       "'ember.passes.conversions.ember_to_linalg', 'shutil') "
                       "if m in sys.modules))")
    out = _output(probe, env)
    # (shutil, with bz2 and lzma: ~2 ms, only for finding the linker, which a hit never runs)
    assert set(out.split()) == (set() if linker() else {"llvmlite"})


def test_without_a_linker_a_warm_start_loads_the_object_through_llvm(tmp_path):
    """EMBER_LD="" turns the shared libraries off: the cache holds objects only, and a warm
    start loads LLVM to run them, with the same results."""
    program = ("import ember as em\n"
               "f = em.function(lambda x: em.tanh(x) * 0.5 + 0.1)\n"
               "print(f(em.constant([1.0, 2.0])).numpy().tolist())\n"
               "import sys\nprint('llvmlite' in sys.modules)\n")
    runs = []
    for ld in ("", "", None):  # cold and warm without a linker, then warm with one
        env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path)}
        env.pop("EMBER_LD", None)
        if ld is not None:
            env["EMBER_LD"] = ld
        runs.append(subprocess.run([sys.executable, "-c", program], env=env,
                                   capture_output=True, text=True, timeout=120,
                                   check=True).stdout.split("\n"))
    assert runs[0][0] == runs[1][0] == runs[2][0]
    assert runs[1][1] == runs[2][1] == "True"  # an object-only entry needs LLVM, even later


def test_the_process_context_loads_the_other_dialects_at_the_first_pipeline_run():
    """`import ember` loads the dialects the tracer builds ops of (a call whose code is cached
    needs no other); the first pipeline run loads every dialect (passes build ops of any)."""
    probe = ("import ember as em\nfrom ember.dialects.ember import irdl\n"
             "c = irdl.tracing_context()\nf = em.function(lambda x: x * 2.0)\n"
             "x = em.constant([1.0])\nconcrete = f.get_concrete_function(x)\n"
             "print(c.is_registered_operation('llvm.call'),\n"
             "      c.is_registered_operation('scf.for'))\n"
             "concrete.mlir('optimized')\n"
             "print(c.is_registered_operation('llvm.call'), irdl.default_context() is c)\n")
    out = _output(probe).split("\n")
    assert out[:2] == ["False True", "True True"]


def test_a_compiler_source_file_that_cannot_be_read_does_not_stop_the_import(monkeypatch,
                                                                              tmp_path):
    """The fingerprint stats every compiler file, imported or not: one it cannot read (a
    shared install's permissions) is reported by the first compile, as before the
    fingerprint was taken at import, and `import ember` still works."""
    from ember.backends.cpu import cache, host_target
    from ember.runtime import startup

    def refuse(packages):
        raise PermissionError(13, "Permission denied", "backends/cuda/driver.py")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(host_target, "source_hash", refuse)
    cache.compiler_fingerprint.cache_clear()
    try:
        startup.prepare()
        assert cache.compiler_fingerprint.cache_info().currsize == 0
    finally:
        cache.compiler_fingerprint.cache_clear()
