"""The Python loader (ember/aot_loader.py, em.aot.load): loading again an artifact compiled
again into the same folder, argument conversion as a ConcreteFunction does it, reprs."""

import numpy as np
import pytest

import ember as em
from ember import aot_loader


def test_a_library_compiled_again_into_its_folder_loads_anew(tmp_path):
    # dlopen returned the library loaded before from the same path: the new manifest's
    # signatures then differed from the old library's ("do not belong together")
    def once(x):
        return x + 1.0

    def twice(x, y):
        return x * 2.0 + y

    em.aot.compile(once, ["f32[?]"], out_dir=str(tmp_path), name="edit")
    old = em.aot.load(str(tmp_path))
    assert old(np.ones(2, np.float32)).tolist() == [2.0, 2.0]
    em.aot.compile(twice, ["f32[?]", "f32[?]"], out_dir=str(tmp_path), name="edit")
    new = em.aot.load(str(tmp_path))
    assert new(np.ones(2, np.float32), np.ones(2, np.float32)).tolist() == [3.0, 3.0]
    assert aot_loader.load(str(tmp_path)).twice is not None  # the numpy-only loader too
    again = em.aot.load(str(tmp_path))  # the same content: the same library
    assert again._lib is new._lib
    assert again(np.ones(1, np.float32), np.zeros(1, np.float32)).tolist() == [2.0]
    assert old(np.ones(1, np.float32)).tolist() == [2.0]  # the old one still runs


@pytest.fixture(scope="module")
def stats(tmp_path_factory):
    def stats(a, idx):
        return em.reduce_sum(a) + em.cast(em.reduce_sum(idx), em.float64)

    out = tmp_path_factory.mktemp("stats")
    em.aot.compile(stats, ["f64[?]", "i32[?]"], out_dir=str(out))
    cf = em.function(stats).get_concrete_function(em.TensorSpec([None], em.float64),
                                                  em.TensorSpec([None], em.int32))
    return out, cf


def _outcome(fn, *args):
    try:
        return "ok", float(np.asarray(fn(*args)))
    except Exception as e:  # noqa: BLE001 (compared below)
        return type(e).__name__, str(e).replace("ConcreteFunction ", "")


@pytest.mark.parametrize("args", [
    ([1.0, 2.0], np.zeros(1, np.int32)),  # a list: converted silently before
    (np.ones(2), [2**40]),  # wrapped around to 0 in int32
    (np.ones(2), (1, 2)),
    (np.ones(1), 2**40),  # a Python int that int32 cannot hold
    (np.ones(1), 3),
    (2.5, np.int32(1)),
    (np.ones(1), 1.5),
    (True, np.int32(1)),
    (np.ones(1), np.float64(1.0)),  # numpy's scalars keep their dtype
], ids=["list", "list-too-large", "tuple", "int-too-large", "int", "float", "float-for-int",
        "bool", "numpy-scalar"])
def test_arguments_are_converted_as_a_concrete_function_converts_them(stats, args):
    out, cf = stats
    want = _outcome(cf, *args)
    assert _outcome(em.aot.load(str(out)), *args) == want
    assert _outcome(aot_loader.load(str(out)), *args)[:1] == want[:1]


def test_variables_and_reprs(tmp_path):
    scale = em.Variable(np.float32(2.0), name="scale")

    def scaled(x):
        return x * scale

    em.aot.compile(scaled, ["f32[?, 3]"], out_dir=str(tmp_path), name="sc",
                   freeze_variables=False)
    lib = em.aot.load(str(tmp_path))
    assert repr(lib) == (f"<Library sc ({tmp_path}/libsc.so): scaled(x: float32[?, 3]) -> "
                         "(float32[?, 3]), variables scale:0>")
    assert repr(lib.scaled) == "<Entry sc_scaled(x: float32[?, 3]) -> (float32[?, 3])>"
    lib.set_variable("scale:0", 5.0)  # a Python number, converted as a call's argument
    assert lib(np.ones((1, 3), np.float32)).tolist() == [[5.0] * 3]
    with pytest.raises(ValueError, match=r"'scale:0' is a float32 scalar, got "
                                         r"float32\[2\]"):
        lib.set_variable("scale:0", np.ones(2, np.float32))
    with pytest.raises(ValueError, match=r"is a float32 scalar, got a float64 scalar"):
        lib.set_variable("scale:0", np.float64(5.0))


def test_a_variable_is_set_by_the_name_given_to_it(tmp_path):
    # set_variable took only the tensor name ("scale:0"); "scale", the name the user gave
    # em.Variable (tfcompile names variables by node, without the output index), was a
    # KeyError, in Python and in C alike
    import ctypes
    scale = em.Variable(np.float32(2.0), name="scale")
    bias = em.Variable(np.zeros(3, np.float32), name="dense/bias")

    def affine(x):
        return x * scale + bias

    em.aot.compile(affine, ["f32[3]"], out_dir=str(tmp_path), name="aff",
                   freeze_variables=False)
    lib = em.aot.load(str(tmp_path))
    lib.set_variable("scale", 4.0)
    lib.set_variable("dense/bias", np.ones(3, np.float32))
    assert lib(np.ones(3, np.float32)).tolist() == [5.0] * 3
    assert lib.get_variable("scale") == 4.0 and lib.get_variable("scale:0") == 4.0
    with pytest.raises(KeyError, match=r"aff has no variable 'scal'; its variables: "
                                       r"'scale', 'dense/bias'"):
        lib.set_variable("scal", 1.0)
    with pytest.raises(ValueError, match=r"variable 'scale' is a float32 scalar"):
        lib.set_variable("scale", np.ones(2, np.float32))
    c_set = ctypes.CDLL(str(tmp_path / "libaff.so")).aff_set_variable
    c_set.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int64]
    value = np.array(7.0, np.float32)
    assert c_set(b"scale", value.ctypes.data, 4) == 0
    assert lib.get_variable("scale:0") == 7.0
    assert c_set(b"scal", value.ctypes.data, 4) != 0
