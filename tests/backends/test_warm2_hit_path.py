"""A call whose code is in the disk cache (a warm start) runs the cache's hit path
(backends/cpu/warm.py): its key and its shared library, with nothing of the compiler."""

import os
import subprocess
import sys

from ember.backends.cpu.shared import linker

COMPILER = ("llvmlite", "mlir.dialects.linalg", "ember.passes.conversions.ember_to_linalg",
            "ember.backends.cpu.compiler", "ember.backends.cpu.backend",
            "ember.backends.cpu.kernels", "ember.backends.cpu.translate",
            "ember.backends.cpu.parallel")

PROGRAM = ("import ember as em\n"
           "f = em.function(lambda x: em.tanh(x) * 0.5 + 0.1)\n"
           "print(f(em.constant([1.0, 2.0])).numpy().tolist())\n")


def _run(code: str, cache) -> list[str]:
    env = {**os.environ, "EMBER_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120, check=True).stdout.split("\n")


def test_a_warm_start_imports_no_module_of_the_compiler(tmp_path):
    """Without a linker (entries hold objects only) LLVM loads the object: llvmlite and
    the backend's stages are imported then, but still nothing that lowers or compiles."""
    probe = PROGRAM + f"import sys\nprint(' '.join(m for m in {COMPILER!r} if m in sys.modules))"
    cold = _run(probe, tmp_path)
    assert "ember.backends.cpu.compiler" in cold[1].split()  # it compiled
    warm = _run(probe, tmp_path)
    assert warm[0] == cold[0]
    lowering = {"mlir.dialects.linalg", "ember.passes.conversions.ember_to_linalg",
                "ember.backends.cpu.compiler"}
    if linker() is not None:
        assert warm[1] == ""
    else:
        assert "llvmlite" in warm[1].split() and not lowering & set(warm[1].split())


def test_a_warm_start_and_a_compile_agree_on_the_key(tmp_path):
    """The hit path keys an entry as compile_function stored it: the second process finds
    the code (no compile: the compiler is not imported) and a changed program does not."""
    probe = ("import sys\n" + PROGRAM +
             "print('ember.backends.cpu.compiler' in sys.modules)\n")
    assert _run(probe, tmp_path)[1] == "True"
    assert _run(probe, tmp_path)[1] == "False"  # loaded (through LLVM if no linker)
    other = probe.replace("* 0.5", "* 0.25")
    assert _run(other, tmp_path)[1] == "True"  # another module: another key, compiled
