"""Differential tests of the structural lowering rules (matmul, transpose, reshape,
broadcast_to, expand_dims, squeeze): each case builds one ember op, lowers it with
`convert-ember-to-linalg`, compiles and runs it with `lowering_harness`, and compares the
result with the op's numpy reference kernel. Integers must match exactly; floats to a
tolerance per dtype (f32 sums run in loop order, half floats round once from f32).

`dynamic` cases declare the listed dims `?` in the function signature and cast the result back
to its static type, so the rules' dynamic-shape paths run too.
"""


import numpy as np
import pytest
from mlir import ir
from mlir.dialects import tensor

from ember.dialects.ember import dtypes
from ember.dialects.ember import structure as S
from ember.dialects.ember.builder import build_function, emit
from ember.dialects.ember.convert import type_from_mlir, type_to_mlir
from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.types import TensorType
from lowering_harness import lower, run_ember

TOLERANCE = {"float16": 1e-2, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12}


def random_array(rng, shape, dtype: str) -> np.ndarray:
    """Random values of `dtype` (ints over their whole range where products may wrap)."""
    d = dtypes.as_dtype(dtype)
    if d.is_bool:
        return rng.integers(0, 2, shape).astype(np.bool_)
    if d.is_floating:
        return np.asarray(rng.standard_normal(shape)).astype(d.np_dtype)
    return np.asarray(rng.integers(d.min, int(d.max) + 1, shape, dtype=np.int64)).astype(
        d.np_dtype)


def ember_text(spec, arrays, attrs, dynamic=()) -> str:
    """`func.func @main` applying `spec` to arguments shaped like `arrays`.

    `dynamic` holds (argument, dim) pairs declared `?`; the result is cast back to static.
    """
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        arg_types = []
        for i, a in enumerate(arrays):
            shape = tuple(None if (i, j) in dynamic else n for j, n in enumerate(a.shape))
            arg_types.append(TensorType(dtypes.as_dtype(a.dtype), shape))

        def body(*args):
            out = emit(spec, args, attrs)
            if not dynamic:
                return out
            static = TensorType(type_from_mlir(out.type).dtype, _reference(spec, arrays,
                                                                           attrs).shape)
            return tensor.CastOp(type_to_mlir(static), out).result
        build_function(module, "main", arg_types, body)
        return str(module)


def _reference(spec, arrays, attrs) -> np.ndarray:
    with np.errstate(all="ignore"):  # NaN and infinity cases are deliberate
        return np.asarray(spec.reference(*arrays, **spec.normalize_attrs(attrs)))


def check(spec, arrays, attrs, dynamic=()) -> None:
    """Compiled result of `spec` on `arrays` equals its reference kernel's."""
    text = ember_text(spec, arrays, attrs, dynamic)
    got = run_ember(text, arrays)[0]
    want = _reference(spec, arrays, attrs)
    if got.dtype == np.int8 and want.dtype == np.uint8:  # ui8 results come back as i8
        got = got.view(np.uint8)
    if want.dtype != got.dtype:
        want = want.astype(got.dtype)
    assert got.shape == want.shape, f"{got.shape} != {want.shape}\n{text}"
    dtype = dtypes.as_dtype(got.dtype)
    if dtype.is_floating:
        tol = TOLERANCE[dtype.name]
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=tol, atol=tol, err_msg=text)
    else:
        np.testing.assert_array_equal(got, want, err_msg=text)


MATMUL = [  # (a shape, b shape, transpose_a, transpose_b, dtype, dynamic)
    ((4, 3), (3, 5), False, False, "float32", ()),
    ((3, 4), (3, 5), True, False, "float64", ()),
    ((4, 3), (5, 3), False, True, "float32", ()),
    ((3, 4), (5, 3), True, True, "float32", ()),
    ((2, 4, 3), (2, 3, 5), False, False, "float32", ()),          # batch_matmul
    ((2, 3, 4, 3), (2, 3, 3, 5), False, False, "float32", ()),    # batch dims collapsed
    ((2, 3, 4, 3), (5, 3), False, True, "float32", ()),           # rows of a 2-D rhs
    ((1, 4, 3), (2, 3, 5), False, False, "float32", ()),          # broadcast batch
    ((4, 3), (2, 3, 5), False, False, "float64", ()),
    ((3, 1, 3, 4), (2, 5, 3), True, True, "int32", ()),
    ((4, 3), (3, 5), False, False, "int64", ()),
    ((4, 3), (3, 5), False, False, "int8", ()),                   # wraps like numpy
    ((2, 4, 3), (3, 5), False, False, "uint8", ()),
    ((4, 8), (8, 5), False, False, "float16", ()),
    ((2, 4, 8), (1, 8, 5), False, False, "bfloat16", ()),
    ((4, 3), (3, 5), False, False, "float32", ((0, 0), (1, 1))),
    ((2, 4, 3), (2, 3, 5), False, False, "float32", ((0, 0), (1, 0))),  # generic
]


@pytest.mark.parametrize("a_shape,b_shape,ta,tb,dtype,dynamic", MATMUL)
def test_matmul_matches_reference(a_shape, b_shape, ta, tb, dtype, dynamic):
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    a, b = random_array(rng, a_shape, dtype), random_array(rng, b_shape, dtype)
    check(S.MatmulOp, [a, b], {"transpose_a": ta, "transpose_b": tb}, dynamic)


@pytest.mark.parametrize("shape,perm,dtype,dynamic", [
    ((2, 3), (1, 0), "float32", ()),
    ((2, 3, 4), (2, 0, 1), "uint8", ()),
    ((2, 3, 4), (0, 1, 2), "int32", ()),
    ((2, 3, 4, 5), (3, 1, 0, 2), "float64", ((0, 0), (0, 2))),
    ((3, 2), (1, 0), "bool", ()),
    ((3, 2), (1, 0), "int8", ()),
])
def test_transpose_matches_reference(shape, perm, dtype, dynamic):
    x = random_array(np.random.default_rng(0), shape, dtype)
    check(S.TransposeOp, [x], {"perm": perm}, dynamic)


@pytest.mark.parametrize("shape,new,dynamic", [
    ((2, 3, 2), (-1, 2), ()),            # collapse
    ((2, 3, 2), (12,), ()),
    ((6, 2), (2, 3, 1, 2), ()),          # expand, with a unit dim
    ((2, 3, 2), (3, 4), ()),             # neither: through 1-D
    ((), (1, 1), ()),
    ((1, 1), (), ()),
    ((4, 3), (3, 2, 2), ()),
    ((3, 4), (-1, 2), ((0, 0),)),        # tensor.reshape with a computed dim
    ((3, 4), (2, 6), ((0, 1),)),
])
def test_reshape_matches_reference(shape, new, dynamic):
    x = random_array(np.random.default_rng(1), shape, "float32")
    check(S.ReshapeOp, [x], {"shape": new}, dynamic)


@pytest.mark.parametrize("shape,target,dtype,dynamic", [
    ((3,), (4, 3), "float32", ()),
    ((5, 1), (2, 5, 7), "int32", ()),
    ((), (2, 2), "bool", ()),
    ((), (2, 2), "int16", ()),
    ((2, 3), (2, 3), "int64", ()),
    ((1, 3, 1), (2, 4, 3, 5), "uint8", ()),
    ((5, 1), (2, 5, 7), "float64", ((0, 0),)),
])
def test_broadcast_to_matches_reference(shape, target, dtype, dynamic):
    x = random_array(np.random.default_rng(2), shape, dtype)
    check(S.BroadcastToOp, [x], {"shape": target}, dynamic)


@pytest.mark.parametrize("shape,axis,dynamic", [
    ((3,), 0, ()), ((3, 2), -1, ()), ((3, 2), 1, ()), ((), 0, ()), ((4, 2), 1, ((0, 0),)),
])
def test_expand_dims_matches_reference(shape, axis, dynamic):
    x = random_array(np.random.default_rng(3), shape, "int32")
    check(S.ExpandDimsOp, [x], {"axis": axis}, dynamic)


@pytest.mark.parametrize("shape,axes,dynamic", [
    ((1, 3), (0,), ()), ((1, 2, 1, 1), (), ()), ((3, 1), (-1,), ()), ((1, 1), (0, 1), ()),
    ((2, 3), (), ()), ((1, 3, 1), (0,), ((0, 0),)),
])
def test_squeeze_matches_reference(shape, axes, dynamic):
    x = random_array(np.random.default_rng(4), shape, "float16")
    check(S.SqueezeOp, [x], {"axes": axes}, dynamic)


def test_matmul_lowers_to_named_ops():
    a, b = np.zeros((2, 4, 3), np.float32), np.zeros((2, 3, 5), np.float32)
    text = str(lower(ember_text(S.MatmulOp, [a, b], {})))
    assert "linalg.batch_matmul" in text and "linalg.fill" in text
    text = str(lower(ember_text(S.MatmulOp, [a[:1], b], {})))
    assert "linalg.generic" in text and "reduction" in text
