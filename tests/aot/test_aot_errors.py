"""Errors of compiled code come back through the C API and through `load` as the class and
message the JIT raises (the library carries its error sites' messages itself); bad
arguments are refused as a ConcreteFunction refuses them."""

import ctypes

import numpy as np
import pytest

import ember as em
from aot_harness import run_clean

I32, F32 = em.int32, em.float32


@em.function(input_signature=[em.TensorSpec([None], F32), em.TensorSpec([None], F32)])
def add(x, y):
    return x + y


@em.function(input_signature=[em.TensorSpec([None, None], F32),
                              em.TensorSpec([None, None], F32)])
def product(a, b):
    return em.matmul(a, b)


@em.function(input_signature=[em.TensorSpec([None], I32), em.TensorSpec([None], I32)])
def divide(x, y):
    return x // y


@em.function(input_signature=[em.TensorSpec([None], F32), em.TensorSpec([None], I32)])
def pick(x, i):
    return em.gather(x, i)


@em.function(input_signature=[em.TensorSpec([None], F32)])
def positive(x):
    em.debugging.assert_less(em.constant(0.0), x, message="x must be positive")
    return em.sqrt(x)


CASES = [("add", (np.ones(3, np.float32), np.ones(5, np.float32))),
         ("product", (np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))),
         ("divide", (np.array([4, 5], np.int32), np.array([1, 0], np.int32))),
         ("pick", (np.arange(4, dtype=np.float32), np.array([1, 9], np.int32))),
         ("positive", (np.array([1.0, -2.0], np.float32),))]
FUNCTIONS = {"add": add, "product": product, "divide": divide, "pick": pick,
             "positive": positive}


@pytest.fixture(scope="module")
def lib_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("errors")
    em.aot.compile(FUNCTIONS, out_dir=str(out), name="errs")
    return out


def _jit_error(name, args):
    with pytest.raises(Exception) as info:
        FUNCTIONS[name](*args)
    return info.value


@pytest.mark.parametrize("name,args", CASES, ids=[c[0] for c in CASES])
def test_error_of_compiled_code_is_the_jits(lib_dir, name, args):
    want = _jit_error(name, args)
    lib = em.aot.load(str(lib_dir))
    with pytest.raises(type(want)) as got:
        getattr(lib, name)(*args)
    assert type(got.value) is type(want)
    assert str(got.value) == str(want)


def test_error_comes_back_through_the_c_api(lib_dir):
    want = _jit_error("add", CASES[0][1])
    c = ctypes.CDLL(str(lib_dir / "liberrs.so"))
    c.errs_add.restype = ctypes.c_int
    c.errs_last_error.restype = c.errs_error_name.restype = ctypes.c_char_p
    x, y = np.ones(3, np.float32), np.ones(5, np.float32)
    out, shape = ctypes.c_void_p(), (ctypes.c_int64 * 1)()
    code = c.errs_add(ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(3),
                      ctypes.c_void_p(y.ctypes.data), ctypes.c_int64(5), ctypes.byref(out),
                      shape)
    assert code == 4 and c.errs_error_name(code) == b"OpShapeError"
    assert c.errs_last_error().decode() == str(want)
    assert out.value is None  # nothing allocated on an error
    code = c.errs_add(ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(-1),
                      ctypes.c_void_p(y.ctypes.data), ctypes.c_int64(3), ctypes.byref(out),
                      shape)
    assert code == 8 and b"x_dim0 is negative" in c.errs_last_error()


def test_errors_in_a_clean_process_have_the_jits_class_name_and_message(lib_dir, tmp_path):
    wants = {name: _jit_error(name, args) for name, args in CASES}
    np.savez(tmp_path / "args.npz", **{f"{name}{k}": a for name, args in CASES
                                       for k, a in enumerate(args)})
    code = ("import numpy as np\n"
            f"sys.path.insert(0, {str(lib_dir)!r})\n"
            "import ember_aot_loader\n"
            f"lib = ember_aot_loader.load({str(lib_dir)!r})\n"
            "arrays = np.load('args.npz')\n"
            f"for name in {[name for name, _ in CASES]!r}:\n"
            "    args = [arrays[k] for k in sorted(arrays.files) if k[:-1] == name]\n"
            "    try:\n"
            "        getattr(lib, name)(*args)\n"
            "    except Exception as e:\n"
            "        print(name, [c.__name__ for c in type(e).__mro__], repr(str(e)))\n")
    done = run_clean(tmp_path, code)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == len(CASES)
    for line, (name, _) in zip(lines, CASES):
        want = wants[name]
        bases = [c.__name__ for c in type(want).__mro__ if c.__module__ in ("builtins",)]
        got_name, rest = line.split(" ", 1)
        assert got_name == name
        mro, message = rest.rsplit("] ", 1)
        assert mro.startswith(f"['{type(want).__name__}'")
        assert all(f"'{b}'" in mro for b in bases)
        assert eval(message) == str(want)


@pytest.mark.parametrize("bad", [np.ones(3, np.float64), np.ones((3, 1), np.float32),
                                 np.float32(1.0)])
def test_bad_arguments_are_refused_as_a_concrete_function_refuses_them(lib_dir, bad):
    cf = add.get_concrete_function()
    with pytest.raises(em.errors.InvalidArgumentError) as want:
        cf(bad, np.ones(3, np.float32))
    lib = em.aot.load(str(lib_dir))
    with pytest.raises(em.errors.InvalidArgumentError) as got:
        lib.add(bad, np.ones(3, np.float32))
    assert str(got.value) == str(want.value)
    with pytest.raises(TypeError, match=r"add\(x, y\) takes 2 tensor arguments but 3"):
        lib.add(1, 2, 3)


def test_threads_call_concurrently_each_with_its_own_error(lib_dir):
    lib = em.aot.load(str(lib_dir))
    want = str(_jit_error("add", CASES[0][1]))
    ok = np.arange(1000, dtype=np.float32)
    failures = []

    def work(fail: bool):
        for _ in range(200):
            try:
                if fail:
                    with pytest.raises(em.errors.OpShapeError) as info:
                        lib.add(*CASES[0][1])
                    assert str(info.value) == want
                else:
                    assert np.array_equal(lib.add(ok, ok), ok * 2)
            except BaseException as e:  # noqa: BLE001 (reported below)
                failures.append(e)
                return

    import threading
    threads = [threading.Thread(target=work, args=(k % 2 == 0,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]


def test_out_of_memory_is_the_jits_memory_error(tmp_path):
    @em.function(input_signature=[em.TensorSpec([], em.int64)])
    def big(n):
        return em.range(n)

    em.aot.compile(big, out_dir=str(tmp_path))
    lib = em.aot.load(str(tmp_path))
    for n in (2 ** 40, 123456789012345):
        with pytest.raises(MemoryError) as want:
            big(np.int64(n))
        with pytest.raises(MemoryError) as got:
            lib(np.int64(n))
        assert str(got.value) == str(want.value)
        assert "Unable to allocate" in str(got.value)


def test_products_with_every_dim_dynamic_compile_and_raise_the_jits_error(tmp_path):
    # 3 sentinel `?` dims of a tensor made more bytes than an int64 counts: the error
    # table raised a ShapeError while compiling
    spec = em.TensorSpec([None, None, None], em.float32)

    @em.function(input_signature=[spec, spec])
    def bmm(a, b):
        return em.matmul(a, b)

    em.aot.compile(bmm, out_dir=str(tmp_path))
    lib = em.aot.load(str(tmp_path))
    a, b = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
    assert lib(a, b).tolist() == np.matmul(a, b).tolist()
    bad = np.ones((2, 5, 5), np.float32)
    with pytest.raises(em.errors.OpShapeError) as want:
        bmm(a, bad)
    with pytest.raises(em.errors.OpShapeError, match="contraction dims differ") as got:
        lib(a, bad)
    assert str(got.value).split(" (at ")[0] == str(want.value).split(" (at ")[0]


def test_null_arrays_are_refused_unless_empty(lib_dir):
    # a NULL input segfaulted while NULL outputs were refused
    c = ctypes.CDLL(str(lib_dir / "liberrs.so"))
    c.errs_last_error.restype = ctypes.c_char_p
    y = np.ones(2, np.float32)
    out, shape = ctypes.c_void_p(), (ctypes.c_int64 * 1)()
    code = c.errs_add(None, ctypes.c_int64(2), ctypes.c_void_p(y.ctypes.data),
                      ctypes.c_int64(2), ctypes.byref(out), shape)
    assert code == 8 and c.errs_last_error() == b"errs_add: x is NULL"
    code = c.errs_add(None, ctypes.c_int64(0), None, ctypes.c_int64(0), ctypes.byref(out),
                      shape)
    assert code == 0 and shape[0] == 0
    c.errs_free(out)


@pytest.mark.parametrize("n", [2**46, 2**60, 2**62])
def test_huge_dims_from_c_are_out_of_memory(lib_dir, n):
    # sizes computed from such dims overflowed int64: a small buffer, then a segfault
    c = ctypes.CDLL(str(lib_dir / "liberrs.so"))
    c.errs_last_error.restype = ctypes.c_char_p
    x = np.ones(4, np.float32)
    out, shape = ctypes.c_void_p(), (ctypes.c_int64 * 1)()
    code = c.errs_add(ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(n),
                      ctypes.c_void_p(x.ctypes.data), ctypes.c_int64(n), ctypes.byref(out),
                      shape)
    assert code == 1 and c.errs_last_error().decode() == (
        f"Unable to allocate the arrays of @add: input x of shape [{n}] would take more "
        "than 2**47 bytes, more than a process can address: out of memory")


def test_a_reshape_to_a_shape_of_unknown_length_is_refused_with_the_reason(tmp_path):
    # its result's rank is the shape's length: a C caller could pass any length
    f = em.function(lambda x: em.reshape(x, em.cast(x, em.int32)),
                    input_signature=[em.TensorSpec([None], em.float32)])
    with pytest.raises(em.errors.NotCompilable,
                       match="'ember.dynamic_reshape': its shape operand tensor<.xi32> has a "
                             "length known only when it runs"):
        em.aot.compile(f, out_dir=str(tmp_path))
