"""Dynamic dims through the C API, results whose size depends on values, variables frozen
or kept as buffers, and what em.aot.compile refuses."""

import numpy as np
import pytest

import ember as em
from aot_harness import own_kernels_jit, same_bits


def _check(lib, fn, *args):
    with own_kernels_jit():
        want = fn(*args)
    got = lib(*args)
    want = want if isinstance(want, (tuple, list)) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert same_bits(g, w.numpy()), (g, w)


def test_several_dynamic_dims_and_static_outputs(tmp_path):
    @em.function(input_signature=[em.TensorSpec([None, None], em.float32),
                                  em.TensorSpec([None, None], em.float32)])
    def f(a, b):
        p = em.matmul(a, b)
        return em.transpose(p) * 2.0, em.reduce_sum(p), em.shape(p)

    em.aot.compile(f, out_dir=str(tmp_path))
    lib = em.aot.load(str(tmp_path))
    rng = np.random.default_rng(0)
    for m, k, n in [(3, 4, 5), (1, 1, 1), (0, 3, 2), (6, 0, 2), (64, 48, 40), (1, 300, 70)]:
        _check(lib, f, rng.standard_normal((m, k)).astype(np.float32),
               rng.standard_normal((k, n)).astype(np.float32))


def test_products_of_run_time_sizes_call_embers_gemm(tmp_path):
    @em.function(input_signature=[em.TensorSpec([None, None], em.float64),
                                  em.TensorSpec([None, None], em.float64)])
    def f(a, b):
        return em.matmul(a, b, transpose_b=True), em.matmul(a, a, transpose_a=True)

    em.aot.compile(f, out_dir=str(tmp_path))
    assert "f_set_gemm_threads" in (tmp_path / "f.h").read_text()  # the kernels are in
    lib = em.aot.load(str(tmp_path))
    rng = np.random.default_rng(1)
    for m, k, n in [(40, 50, 60), (2, 3, 4), (100, 1, 90)]:
        _check(lib, f, rng.standard_normal((m, k)), rng.standard_normal((n, k)))


def test_results_whose_size_depends_on_values(tmp_path):
    @em.function(input_signature=[em.TensorSpec([None], em.int64)])
    def f(x):
        return em.boolean_mask(x, x > 2), em.range(em.reduce_max(x))

    em.aot.compile(f, out_dir=str(tmp_path))
    lib = em.aot.load(str(tmp_path))
    _check(lib, f, np.array([1, 5, 3, 2, 7], np.int64))
    _check(lib, f, np.array([0], np.int64))
    masked, steps = lib(np.array([9, 3], np.int64))
    assert masked.tolist() == [9, 3] and steps.tolist() == list(range(9))
    del masked  # freed by the library's free through the array's base
    assert steps.base is not None


def test_frozen_variables_are_constants(tmp_path):
    v = em.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="weights")

    @em.function(input_signature=[em.TensorSpec([None, 2], em.float32)])
    def f(x):
        return em.matmul(x, v)

    em.aot.compile(f, out_dir=str(tmp_path), freeze_variables=True)
    lib = em.aot.load(str(tmp_path))
    x = np.ones((2, 2), np.float32)
    _check(lib, f, x)
    assert lib.variables == {} and lib.manifest["frozen"] is True
    with pytest.raises(KeyError, match="frozen into constants"):
        lib.get_variable("weights:0")
    v.assign(np.zeros((2, 3), np.float32))  # the library keeps the value it was given
    assert lib(x).tolist() == [[3.0, 5.0, 7.0]] * 2
    assert "set_variable" not in (tmp_path / "f.h").read_text()


def test_variables_as_buffers_the_caller_sets(tmp_path):
    v = em.Variable(np.arange(6, dtype=np.float32).reshape(2, 3), name="weights")
    b = em.Variable(np.ones(3, np.float32), name="bias")

    @em.function(input_signature=[em.TensorSpec([None, 2], em.float32)])
    def f(x):
        return em.matmul(x, v) + b

    @em.function(input_signature=[])
    def g():
        return b * 2.0

    em.aot.compile({"f": f, "g": g}, out_dir=str(tmp_path), name="model",
                   freeze_variables=False)
    lib = em.aot.load(str(tmp_path))
    assert sorted(lib.variables) == ["bias:0", "weights:0"]
    x = np.ones((3, 2), np.float32)
    _check(lib.f, f, x)
    new = np.full((2, 3), 0.5, np.float32)
    lib.set_variable("weights:0", new)
    v.assign(new)
    _check(lib.f, f, x)
    lib.set_variable("bias:0", np.zeros(3, np.float32))  # one buffer for both entries
    assert lib.g().tolist() == [0.0, 0.0, 0.0]
    assert same_bits(lib.get_variable("weights:0"), new)
    with pytest.raises(ValueError, match=r"variable 'bias:0' is float32\[3\]"):
        lib.set_variable("bias:0", np.zeros(4, np.float32))
    header = (tmp_path / "model.h").read_text()
    assert '"weights:0": float32[2, 3], 24 bytes' in header
    assert "int model_set_variable(const char *name, const void *data, int64_t nbytes);" \
        in header


def test_refusals(tmp_path):
    v = em.Variable(1.0)

    @em.function(input_signature=[em.TensorSpec([], em.float32)])
    def counts(x):
        v.assign_add(x)
        return v.read_value()

    with pytest.raises(em.aot.AotError, match="changes variable .*keeps no state"):
        em.aot.compile(counts, out_dir=str(tmp_path))

    @em.function(input_signature=[em.TensorSpec([], em.float32)])
    def calls_python(x):
        return em.py_function(lambda t: t, [x], em.float32)

    with pytest.raises(em.aot.AotError, match="calls Python"):
        em.aot.compile(calls_python, out_dir=str(tmp_path))
    with pytest.raises(em.aot.AotError, match="has no input_signature"):
        em.aot.compile(em.function(lambda x: x), out_dir=str(tmp_path))
    with pytest.raises(em.aot.AotError, match="'pentium9' is not an x86-64 CPU Ember knows"):
        em.aot.compile(counts, out_dir=str(tmp_path), target_cpu="pentium9")
    with pytest.raises(em.aot.AotError, match="must be a C identifier"):
        em.aot.compile(calls_python, out_dir=str(tmp_path), name="my-lib")


def test_target_cpu_level_and_string_signature(tmp_path):
    def f(x):
        return em.exp(x) + 1.0

    em.aot.compile(f, ["f32[?]"], out_dir=str(tmp_path), target_cpu="x86-64-v3")
    lib = em.aot.load(str(tmp_path))
    assert lib.manifest["target"]["cpu"] == "x86-64-v3"
    x = np.linspace(-2, 2, 37, dtype=np.float32)
    np.testing.assert_allclose(lib(x), np.exp(x) + 1, rtol=1e-6)


def test_parameter_names_that_are_c_keywords(tmp_path):
    def f(int, data):  # noqa: A002 (names C cannot take as they are)
        return int + data

    em.aot.compile(f, ["f32[2]", "f32[2]"], out_dir=str(tmp_path))
    assert "int f_f(const float *in_int, const float *in_data, float *out0);" in \
        (tmp_path / "f.h").read_text()
    lib = em.aot.load(str(tmp_path))
    assert lib(np.ones(2, np.float32), data=np.ones(2, np.float32)).tolist() == [2.0, 2.0]
    assert lib.manifest["entries"][0]["inputs"][0] == {
        "name": "int", "c_name": "in_int", "dtype": "float32", "shape": [2]}


def test_variables_of_one_name_get_unique_names(tmp_path):
    # two layers named "fc": their variables were all "fc/kernel:0"/"fc/bias:0", so
    # lib.variables listed two and setting one by name set the first only
    enc = em.Sequential([em.layers.Dense(2, name="fc")], name="enc")
    dec = em.Sequential([em.layers.Dense(2, name="fc")], name="dec")
    dec(enc(np.ones((1, 2), np.float32)))

    @em.function(input_signature=[em.TensorSpec([None, 2], em.float32)])
    def f(x):
        return dec(enc(x))

    record = em.aot.compile(f, out_dir=str(tmp_path), freeze_variables=False)
    names = [v["name"] for v in record["variables"]]
    assert names == ["fc/kernel:0", "fc/bias:0", "fc/kernel_1:0", "fc/bias_1:0"]
    lib = em.aot.load(str(tmp_path))
    assert list(lib.variables) == names
    for name in names:
        lib.set_variable(name, np.zeros(lib.variables[name]["shape"], np.float32))
    lib.set_variable("fc/bias_1:0", np.array([1.0, 2.0], np.float32))
    assert lib(np.ones((1, 2), np.float32)).tolist() == [[1.0, 2.0]]
    assert lib.get_variable("fc/bias:0").tolist() == [0.0, 0.0]


@pytest.mark.parametrize("entry", ["free", "last_error", "signature", "rt_begin"])
def test_entry_names_the_c_api_defines_are_refused_before_cc(tmp_path, entry):
    def add(x, y):
        return x + y

    with pytest.raises(em.aot.AotError, match=rf"entry '{entry}' would be the C function "
                                              rf"x_{entry}, which is"):
        em.aot.compile({entry: add}, {entry: ["f32[2]", "f32[2]"]}, out_dir=str(tmp_path),
                       name="x")


def test_parameter_names_that_clash_with_generated_ones(tmp_path):
    def f(x, x_dim0, free, status):
        return x + x_dim0 * free * status

    em.aot.compile(f, ["f32[?]", "f32[?]", "f32[]", "f32[]"], out_dir=str(tmp_path))
    assert "int f_f(const float *x, int64_t x_dim0, const float *x_dim0_1, int64_t " \
        "x_dim0_1_dim0, const float *in_free, const float *in_status, float **out0, " \
        "int64_t *out0_shape);" in (tmp_path / "f.h").read_text()
    lib = em.aot.load(str(tmp_path))
    one = np.float32(1)
    assert lib(np.ones(2, np.float32), np.full(2, 2, np.float32), one, one).tolist() == [3, 3]


def test_an_explicit_signature_narrower_than_the_input_signature_is_the_one_compiled(tmp_path):
    """The specs asked for, not the function's wider input_signature: 'f32[4,3]' of a
    [None, 3] signature gave a library taking [?,3] (a new user's ember-compile run). A
    spec wider than the signature is an InputSignatureError."""
    @em.function(input_signature=[em.TensorSpec([None, 3], em.float32)])
    def predict(x):
        return em.matmul(x, em.ones([3, 2])) + 1.0

    manifest = em.aot.compile(predict, ["f32[4,3]"], out_dir=str(tmp_path / "fixed"))
    (entry,) = manifest["entries"]
    assert entry["inputs"][0]["shape"] == [4, 3] and entry["outputs"][0]["shape"] == [4, 2]
    lib = em.aot.load(str(tmp_path / "fixed"))
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    _check(lib, predict, x)
    with pytest.raises(em.errors.InputSignatureError, match="dimension 1 is None"):
        em.aot.compile(predict, ["f32[4,?]"], out_dir=str(tmp_path / "wide"))
