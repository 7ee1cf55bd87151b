"""`import ember` loads no backend: LLVM (llvmlite), MLIR's linalg bindings (their named-op
DSL alone takes ~110 ms) and the CPU backend are loaded by the first compiled call, so eager
code and the command-line tools that lower nothing never pay for them."""

import subprocess
import sys

HEAVY = ("llvmlite", "mlir.dialects.linalg", "ember.backends.cpu.backend",
         "ember.backends.cuda.driver")


def _loaded_after(code: str) -> set:
    probe = f"{code}\nimport sys\nprint(' '.join(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return set(out.split())


def test_import_and_eager_code_load_no_backend():
    assert _loaded_after("import ember as em\n"
                         "em.errors.OpError; em.aot.load; (em.constant([1.0]) * 2).numpy()") \
        == set()


def test_a_tool_loads_no_backend_until_it_lowers():
    assert _loaded_after("import ember.tools.ember_opt") == set()


def test_the_backends_errors_load_them_on_first_use():
    assert _loaded_after("import ember as em\nem.errors.JitError") >= {"llvmlite"}
