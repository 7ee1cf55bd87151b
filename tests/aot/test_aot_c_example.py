"""Acceptance 2 of issue 15: examples/aot/main.c, built with the system's C compiler
against the digits MLP compiled ahead of time, prints what the JIT computes; the library
needs nothing beyond libc, libm and libpthread (and the dynamic loader); the numpy-only
example prints the same."""

import importlib.util
import re
import shutil
import subprocess

import pytest

from aot_harness import ROOT, own_kernels_jit, run_clean

EXAMPLE = ROOT / "examples" / "aot"
ALLOWED = {"libc.so.6", "libm.so.6", "libpthread.so.0", "ld-linux-x86-64.so.2"}


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("aot_digits_model",
                                                  EXAMPLE / "digits_model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path_factory.mktemp("digits")
    module.em.aot.compile(module.predict, out_dir=str(out), name="digits")
    with own_kernels_jit():
        logits, classes = module.predict(module.sample_images())
    return out, module.report(logits.numpy(), classes.numpy())


def test_c_example_prints_the_jit_results(digits, tmp_path):
    out, expected = digits
    cc = shutil.which("cc")
    assert cc is not None, "the fixture's em.aot.compile linked with cc: it must be here"
    binary = tmp_path / "digits"
    subprocess.run([cc, "-O2", "-Wall", "-Werror", "-I", str(out), str(EXAMPLE / "main.c"),
                    "-L", str(out), "-ldigits", f"-Wl,-rpath,{out}", "-o", str(binary)],
                   check=True, capture_output=True, text=True)
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected
    assert len(expected.splitlines()) == 4


def test_library_needs_only_libc_libm_libpthread(digits):
    out, _ = digits
    readelf = shutil.which("readelf")
    # no skip: readelf is binutils', like the ld that `cc -shared` just linked the library with
    assert readelf is not None, "readelf (binutils) is needed to check the library's NEEDED"
    dynamic = subprocess.run([readelf, "-d", str(out / "libdigits.so")], check=True,
                             capture_output=True, text=True).stdout
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dynamic))
    assert needed and needed <= ALLOWED, needed
    assert "TEXTREL" not in dynamic  # position-independent
    symbols = subprocess.run([readelf, "-s", "-W", str(out / "libdigits.so")], check=True,
                             capture_output=True, text=True).stdout
    assert "ember_sgemm" in symbols  # Ember's own kernels are linked in, never OpenBLAS
    assert "openblas" not in symbols.lower()


def test_numpy_only_example_prints_the_same(digits, tmp_path):
    out, expected = digits
    code = (f"sys.argv = ['run_numpy.py', {str(out)!r}]\n"
            f"exec(open({str(EXAMPLE / 'run_numpy.py')!r}).read())\n")
    done = run_clean(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout == expected


def test_the_docstrings_command_line_builds_the_library_main_c_links(tmp_path, capsys):
    # the line lacked --name digits: it wrote libpredict.so, and -ldigits failed
    from ember.tools.ember_compile import main
    doc = (EXAMPLE / "digits_model.py").read_text()
    line = next(li.split() for li in doc.splitlines() if li.strip().startswith("ember-compile"))
    args = [str(ROOT / a) if a.startswith("examples/") else a for a in line[1:]]
    args[args.index("--out") + 1] = str(tmp_path / "out")
    assert main(args) == 0, capsys.readouterr().err
    assert (tmp_path / "out" / "libdigits.so").exists()
    assert "-ldigits" in (EXAMPLE / "main.c").read_text()
