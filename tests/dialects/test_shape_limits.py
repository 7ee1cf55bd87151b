"""Shapes no tensor can have (more bytes than an int64 counts, negative dims) are refused
with an error naming the op and the shape, eagerly, traced and in input signatures, before
MLIR sees them: its type code asserts ("integer overflow in size computation") and kills
the process instead of reporting."""

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember as em
from ember.dialects.ember.types import MAX_BYTES, ShapeError, TensorType

HUGE = [[2**62, 4], [2**31] * 3, [0, 2**62, 4], [2**63]]


@pytest.mark.parametrize("shape", HUGE + [[None, 2**62, 4]], ids=str)
def test_tensor_type_refuses_more_bytes_than_int64_counts(shape):
    with pytest.raises(ShapeError, match=r"of float32 is too large: its elements would take"):
        TensorType(em.float32, shape)


def test_tensor_type_limit_is_in_bytes_like_numpy():
    TensorType(em.int8, (MAX_BYTES,))
    TensorType(em.float64, (MAX_BYTES // 8,))
    with pytest.raises(ShapeError, match="too large"):
        TensorType(em.float64, (MAX_BYTES // 8 + 1,))
    with pytest.raises(ValueError, match="array is too big"):  # numpy draws the same line
        np.empty((MAX_BYTES // 8 + 1,), np.float64)


@pytest.mark.parametrize("shape, message", [
    ((-2, 3), r"shape \[-2, 3\] has a negative dimension"),
    ((np.int64(-1),), "negative dimension"),
    ((True,), "must be an int or None"),
    ((2.0,), "must be an int or None"),
])
def test_tensor_type_refuses_bad_dims(shape, message):
    with pytest.raises(ShapeError, match=message):
        TensorType(em.float32, shape)


def test_tensor_type_takes_numpy_ints_as_python_ints():
    t = TensorType(em.float32, [np.int64(3), None])
    assert t.shape == (3, None) and all(type(d) is int for d in t.shape[:1])


def test_tensor_spec_refuses_a_shape_no_tensor_can_have():
    with pytest.raises(ValueError, match=r"TensorSpec\(shape=\[4611686018427387904, 4\], "
                                         r"dtype=em.float32\): .* is too large"):
        em.TensorSpec([2**62, 4], em.float32)
    em.TensorSpec([None, 2**20], em.float32)  # unknown dims are fine


# Each case runs eagerly and traced; every line of output is `name: ErrorType: message`.
_CASES = """
import sys
import numpy as np
import ember as em

x = em.constant([1.0, 2.0, 3.0, 4.0])
CASES = {
    "zeros": lambda: em.zeros([2**62, 4]),
    "ones": lambda: em.ones([2**31] * 3, em.int8),
    "fill": lambda: em.fill([2**62, 4], 1.0),
    "fill-shape-tensor": lambda: em.fill(em.constant([2**62, 4], em.int64), 1.0),
    "zero-dim-but-huge": lambda: em.zeros([0, 2**62, 4]),
    "reshape": lambda: em.reshape(em.zeros([0]), [-1, 2**62, 4]),
    "broadcast_to": lambda: em.broadcast_to(x, [2**62, 4]),
    "random": lambda: em.stateless_random_uniform([2**62, 4], seed=[1, 2]),
    "negative": lambda: em.zeros([-2, 3]),
    "negative-shape-tensor": lambda: em.fill(em.constant([-2, 3]), 1.0),
}
for name, fn in CASES.items():
    for mode, run in (("eager", fn), ("traced", em.function(fn))):
        try:
            run()
        except Exception as e:
            print(f"{name}/{mode}: {type(e).__name__}: {e}")
        else:
            print(f"{name}/{mode}: no error")
for shape in ([2**62, 4], [2**31] * 3, [-2, 3]):
    try:
        f = em.function(lambda t: t + 1.0, input_signature=[em.TensorSpec(shape)])
        f.get_concrete_function()
    except Exception as e:
        print(f"signature {shape}: {type(e).__name__}: {e}")
    else:
        print(f"signature {shape}: no error")
"""


@pytest.fixture(scope="module")
def located() -> dict:
    """Each case's outcome as printed: an op's error ends with the user's line."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(_CASES)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"died with {result.returncode}:\n{result.stderr[-3000:]}"
    lines = [ln.split(": ", 1) for ln in result.stdout.splitlines()]
    return dict(lines)


@pytest.fixture(scope="module")
def outcomes(located) -> dict:
    """Each case's outcome but for the line it names (checked below)."""
    return {case: re.sub(r" \(at <string>:\d+\)$", "", text) for case, text in located.items()}


def test_eager_and_traced_errors_name_the_same_line_of_the_users_code(located):
    for case in ("zeros", "reshape", "random", "negative-shape-tensor"):
        eager, traced = located[f"{case}/eager"], located[f"{case}/traced"]
        assert re.search(r" \(at <string>:\d+\)$", eager) and eager == traced, (eager, traced)


@pytest.mark.parametrize("mode", ["eager", "traced"])
@pytest.mark.parametrize("case, op, shape", [
    ("zeros", "ember.fill", "[4611686018427387904, 4] of float32"),
    ("ones", "ember.fill", "[2147483648, 2147483648, 2147483648] of int8"),
    ("fill", "ember.fill", "[4611686018427387904, 4] of float32"),
    ("fill-shape-tensor", "ember.fill", "[4611686018427387904, 4] of float32"),
    ("zero-dim-but-huge", "ember.fill", "[0, 4611686018427387904, 4] of float32"),
    ("reshape", "ember.reshape", "[0, 4611686018427387904, 4] of float32"),
    ("broadcast_to", "ember.broadcast_to", "[4611686018427387904, 4] of float32"),
    ("random", "ember.random_uniform", "[4611686018427387904, 4] of float32"),
])
def test_huge_shapes_raise_invalid_argument_naming_op_and_shape(outcomes, case, mode, op,
                                                                shape):
    assert outcomes[f"{case}/{mode}"] == (
        f"InvalidArgumentError: '{op}' op result shape {shape} is too large: its elements "
        f"would take {_bytes(shape)} bytes, more than the {MAX_BYTES} (2**63 - 1) that an "
        "int64 can count")


def _bytes(shape_text: str) -> int:
    dims, dtype = shape_text.split(" of ")
    n = np.dtype(dtype).itemsize
    for d in dims.strip("[]").split(", "):
        n *= max(int(d), 1)
    return n


@pytest.mark.parametrize("mode", ["eager", "traced"])
@pytest.mark.parametrize("case, error", [
    ("negative", "TypeError: dimension -2 in shape [-2, 3] must be a non-negative int or None"),
    ("negative-shape-tensor", "OpShapeError: 'ember.fill' op shape operand has a negative "
                              "dimension -2"),
])
def test_negative_dims_raise_the_same_error_eagerly_and_traced(outcomes, case, mode, error):
    assert outcomes[f"{case}/{mode}"] == error


@pytest.mark.parametrize("shape", ["[4611686018427387904, 4]", "[2147483648, 2147483648, "
                                   "2147483648]"])
def test_huge_input_signature_raises_when_the_spec_is_made(outcomes, shape):
    assert outcomes[f"signature {shape}"].startswith(
        f"ShapeError: TensorSpec(shape={shape}, dtype=em.float32): shape {shape} of float32 "
        "is too large")


def test_negative_input_signature_dim_raises(outcomes):
    assert outcomes["signature [-2, 3]"] == (
        "TypeError: dimension -2 in shape [-2, 3] must be a non-negative int or None")
