"""Result-type inference of every op family, called directly on the specs (no MLIR context).

Each table row is: op name, operand types (MLIR spelling), attributes (Python values, put
through `normalize_attrs`), and the inferred result types, or the error class and the exact
message. Dynamic dims (`?`) and unranked operands (`*`) propagate; ops that read operand
values (`ember.fill`, `ember.range`) are static when the values are given.
"""

import re

import numpy as np
import pytest

from ember.dialects.ember import (REGISTRY, OpAttributeError, OpShapeError, OpTypeError,
                                  parse_type)


def infer(op: str, operands, attrs=None, values=None) -> list[str]:
    spec = REGISTRY[op]
    types = tuple(parse_type(t) for t in operands)
    return [str(t) for t in spec.infer_types(types, spec.normalize_attrs(attrs or {}), values)]


def check(op, operands, attrs, expected):
    """`expected` is a list of result types, or (error class, message)."""
    if isinstance(expected, tuple):
        error, message = expected
        with pytest.raises(error, match="^" + re.escape(f"'{op}' op {message}")):
            infer(op, operands, attrs)
    else:
        assert infer(op, operands, attrs) == expected


def ids(rows):
    return [f"{r[0]}-{i}" for i, r in enumerate(rows)]


INTEGER = "integer (int8, int16, int32, int64 or uint8)"
DIFFERENT = "have different element types"  # the rest of that message explains the fix

# -- elementwise ----------------------------------------------------------------------------

UNARY = [
    ("ember.abs", ["tensor<?x4xi32>"], {}, ["tensor<?x4xi32>"]),
    ("ember.neg", ["tensor<*xf64>"], {}, ["tensor<*xf64>"]),
    ("ember.sign", ["tensor<0xi8>"], {}, ["tensor<0xi8>"]),
    ("ember.square", ["tensor<ui8>"], {}, ["tensor<ui8>"]),
    ("ember.relu", ["tensor<2x?xbf16>"], {}, ["tensor<2x?xbf16>"]),
    ("ember.exp", ["tensor<?xf16>"], {}, ["tensor<?xf16>"]),
    ("ember.expm1", ["tensor<3xf32>"], {}, ["tensor<3xf32>"]),
    ("ember.log", ["tensor<*xf32>"], {}, ["tensor<*xf32>"]),
    ("ember.log1p", ["tensor<f64>"], {}, ["tensor<f64>"]),
    ("ember.sqrt", ["tensor<1x?xf32>"], {}, ["tensor<1x?xf32>"]),
    ("ember.rsqrt", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.tanh", ["tensor<4xf16>"], {}, ["tensor<4xf16>"]),
    ("ember.erf", ["tensor<?xbf16>"], {}, ["tensor<?xbf16>"]),
    ("ember.erfc", ["tensor<2x3xf64>"], {}, ["tensor<2x3xf64>"]),
    ("ember.lgamma", ["tensor<?x2xf16>"], {}, ["tensor<?x2xf16>"]),
    ("ember.digamma", ["tensor<*xf64>"], {}, ["tensor<*xf64>"]),
    ("ember.digamma", ["tensor<4xi8>"], {},
     (OpTypeError, "operand of type tensor<4xi8> must have floating-point elements")),
    ("ember.erf", ["tensor<4xi32>"], {},
     (OpTypeError, "operand of type tensor<4xi32> must have floating-point elements")),
    ("ember.sigmoid", ["tensor<4xbf16>"], {}, ["tensor<4xbf16>"]),
    ("ember.sin", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.cos", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.tan", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.asin", ["tensor<?xf64>"], {}, ["tensor<?xf64>"]),
    ("ember.acos", ["tensor<*xf16>"], {}, ["tensor<*xf16>"]),
    ("ember.atan", ["tensor<2x?xbf16>"], {}, ["tensor<2x?xbf16>"]),
    ("ember.sinh", ["tensor<f32>"], {}, ["tensor<f32>"]),
    ("ember.cosh", ["tensor<4xf64>"], {}, ["tensor<4xf64>"]),
    ("ember.asinh", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.acosh", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.atanh", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.atan", ["tensor<4xi32>"], {},
     (OpTypeError, "operand of type tensor<4xi32> must have floating-point elements")),
    ("ember.atan2", ["tensor<2x?xf32>", "tensor<3xf32>"], {}, ["tensor<2x3xf32>"]),
    ("ember.atan2", ["tensor<2xf32>", "tensor<2xf64>"], {},
     (OpTypeError, "operand types tensor<2xf32> and tensor<2xf64> have different element")),
    ("ember.atan2", ["tensor<2xi32>", "tensor<2xi32>"], {},
     (OpTypeError, "operands of type tensor<2xi32> must have floating-point elements")),
    ("ember.floor", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.ceil", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.round", ["tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.logical_not", ["tensor<?xi1>"], {}, ["tensor<?xi1>"]),
    ("ember.is_nan", ["tensor<2x?xf16>"], {}, ["tensor<2x?xi1>"]),
    ("ember.is_finite", ["tensor<*xbf16>"], {}, ["tensor<*xi1>"]),
    ("ember.exp", ["tensor<3xi32>"], {},
     (OpTypeError, "operand of type tensor<3xi32> must have floating-point or complex "
                   "elements")),
    ("ember.is_nan", ["tensor<3xi64>"], {},
     (OpTypeError, "operand of type tensor<3xi64> must have floating-point elements")),
    ("ember.neg", ["tensor<3xi1>"], {},
     (OpTypeError, "operand of type tensor<3xi1> must have numeric (integer, "
                   "floating-point or complex) elements")),
    ("ember.abs", ["tensor<!ember.string>"], {},
     (OpTypeError, "operand of type tensor<!ember.string> must have numeric (integer, "
                   "floating-point or complex) elements")),
    ("ember.logical_not", ["tensor<2xf32>"], {},
     (OpTypeError, "operand of type tensor<2xf32> must have bool (i1) elements")),
    ("ember.sqrt", [], {}, (OpTypeError, "expects 1 operands (input), got 0")),
    ("ember.invert", ["tensor<?xui8>"], {}, ["tensor<?xui8>"]),
    ("ember.invert", ["tensor<2xf32>"], {},
     (OpTypeError, f"operand of type tensor<2xf32> must have {INTEGER} elements")),
]

BINARY = [
    # static broadcasting
    ("ember.add", ["tensor<2x3xf32>", "tensor<3xf32>"], {}, ["tensor<2x3xf32>"]),
    ("ember.sub", ["tensor<2x1xi32>", "tensor<1x3xi32>"], {}, ["tensor<2x3xi32>"]),
    ("ember.mul", ["tensor<f32>", "tensor<0x2xf32>"], {}, ["tensor<0x2xf32>"]),
    ("ember.maximum", ["tensor<5x1x2xf64>", "tensor<3x1xf64>"], {}, ["tensor<5x3x2xf64>"]),
    ("ember.minimum", ["tensor<1xi8>", "tensor<0xi8>"], {}, ["tensor<0xi8>"]),
    # dynamic dims: a ? meets a static n (it must be 1 or n) -> n; meets 1 or ? -> ?
    ("ember.add", ["tensor<?x3xf32>", "tensor<1xf32>"], {}, ["tensor<?x3xf32>"]),
    ("ember.add", ["tensor<?xf32>", "tensor<4xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.add", ["tensor<4xf32>", "tensor<?xf32>"], {}, ["tensor<4xf32>"]),
    ("ember.add", ["tensor<1xf32>", "tensor<?xf32>"], {}, ["tensor<?xf32>"]),
    ("ember.add", ["tensor<?xf32>", "tensor<?xf32>"], {}, ["tensor<?xf32>"]),
    ("ember.mul", ["tensor<?x1xf32>", "tensor<1x?xf32>"], {}, ["tensor<?x?xf32>"]),
    ("ember.pow", ["tensor<2x?xf32>", "tensor<f32>"], {}, ["tensor<2x?xf32>"]),
    # unranked in, unranked out
    ("ember.add", ["tensor<*xf32>", "tensor<4xf32>"], {}, ["tensor<*xf32>"]),
    ("ember.floordiv", ["tensor<3xi32>", "tensor<*xi32>"], {}, ["tensor<*xi32>"]),
    # result dtypes
    ("ember.div", ["tensor<3xi32>", "tensor<3xi32>"], {}, ["tensor<3xf64>"]),
    ("ember.div", ["tensor<3xi64>", "tensor<?xi64>"], {}, ["tensor<3xf64>"]),
    ("ember.div", ["tensor<3xi8>", "tensor<3xi8>"], {}, ["tensor<3xf32>"]),
    ("ember.div", ["tensor<3xi16>", "tensor<3xi16>"], {}, ["tensor<3xf32>"]),
    ("ember.div", ["tensor<3xui8>", "tensor<3xui8>"], {}, ["tensor<3xf32>"]),
    ("ember.div", ["tensor<3xf16>", "tensor<3xf16>"], {}, ["tensor<3xf16>"]),
    ("ember.div", ["tensor<3xbf16>", "tensor<bf16>"], {}, ["tensor<3xbf16>"]),
    ("ember.mod", ["tensor<3xi64>", "tensor<3xi64>"], {}, ["tensor<3xi64>"]),
    ("ember.add", ["tensor<2x!ember.string>", "tensor<!ember.string>"], {},
     ["tensor<2x!ember.string>"]),
    ("ember.logical_and", ["tensor<?xi1>", "tensor<3xi1>"], {}, ["tensor<3xi1>"]),
    ("ember.logical_or", ["tensor<i1>", "tensor<*xi1>"], {}, ["tensor<*xi1>"]),
    # errors
    ("ember.add", ["tensor<2xf32>", "tensor<3xf32>"], {},
     (OpShapeError, "operand types tensor<2xf32> and tensor<3xf32> are not broadcast-compatible")),
    ("ember.mul", ["tensor<2x3xf32>", "tensor<4x1x2xf32>"], {},
     (OpShapeError, "operand types tensor<2x3xf32> and tensor<4x1x2xf32> are not "
                    "broadcast-compatible")),
    ("ember.add", ["tensor<2xf32>", "tensor<2xf64>"], {},
     (OpTypeError, f"operand types tensor<2xf32> and tensor<2xf64> {DIFFERENT}")),
    ("ember.sub", ["tensor<2xi32>", "tensor<2xi64>"], {},
     (OpTypeError, f"operand types tensor<2xi32> and tensor<2xi64> {DIFFERENT}")),
    ("ember.sub", ["tensor<2x!ember.string>", "tensor<2x!ember.string>"], {},
     (OpTypeError, "operands of type tensor<2x!ember.string> must have numeric (integer, "
                   "floating-point or complex) elements")),
    ("ember.maximum", ["tensor<2xi1>", "tensor<2xi1>"], {},
     (OpTypeError, "operands of type tensor<2xi1> must have numeric (integer or "
                   "floating-point) elements")),
    ("ember.logical_and", ["tensor<3xi32>", "tensor<3xi32>"], {},
     (OpTypeError, "operands of type tensor<3xi32> must have bool (i1) elements")),
    ("ember.bitwise_and", ["tensor<?x3xi32>", "tensor<3xi32>"], {}, ["tensor<?x3xi32>"]),
    ("ember.bitwise_or", ["tensor<2xui8>", "tensor<ui8>"], {}, ["tensor<2xui8>"]),
    ("ember.bitwise_xor", ["tensor<*xi64>", "tensor<2xi64>"], {}, ["tensor<*xi64>"]),
    ("ember.left_shift", ["tensor<4xi8>", "tensor<1xi8>"], {}, ["tensor<4xi8>"]),
    ("ember.right_shift", ["tensor<4xi16>", "tensor<4xi16>"], {}, ["tensor<4xi16>"]),
    ("ember.bitwise_and", ["tensor<3xi1>", "tensor<3xi1>"], {},
     (OpTypeError, f"operands of type tensor<3xi1> must have {INTEGER} elements")),
    ("ember.left_shift", ["tensor<3xi32>", "tensor<3xi64>"], {},
     (OpTypeError, f"operand types tensor<3xi32> and tensor<3xi64> {DIFFERENT}")),
    ("ember.add", ["tensor<3xi32>"], {}, (OpTypeError, "expects 2 operands (lhs, rhs), got 1")),
    ("ember.add", ["tensor<3xi32>", "!ember.resource<tensor<3xi32>>"], {},
     (OpTypeError, "operand 'rhs' must be a tensor, got !ember.resource<tensor<3xi32>>")),
]

COMPARE_AND_SELECT = [
    ("ember.equal", ["tensor<?x2xf32>", "tensor<2xf32>"], {}, ["tensor<?x2xi1>"]),
    ("ember.not_equal", ["tensor<*x!ember.string>", "tensor<!ember.string>"], {},
     ["tensor<*xi1>"]),
    ("ember.equal", ["tensor<3xi1>", "tensor<3xi1>"], {}, ["tensor<3xi1>"]),
    ("ember.less", ["tensor<?x2xi8>", "tensor<2xi8>"], {}, ["tensor<?x2xi1>"]),
    ("ember.less_equal", ["tensor<4xf16>", "tensor<f16>"], {}, ["tensor<4xi1>"]),
    ("ember.greater", ["tensor<2x1xui8>", "tensor<3xui8>"], {}, ["tensor<2x3xi1>"]),
    ("ember.greater_equal", ["tensor<0xf64>", "tensor<1xf64>"], {}, ["tensor<0xi1>"]),
    ("ember.less", ["tensor<2x!ember.string>", "tensor<2x!ember.string>"], {},
     (OpTypeError, "operands of type tensor<2x!ember.string> must have numeric (integer or "
                   "floating-point) elements")),
    ("ember.greater", ["tensor<2xi1>", "tensor<2xi1>"], {},
     (OpTypeError, "operands of type tensor<2xi1> must have numeric (integer or "
                   "floating-point) elements")),
    ("ember.equal", ["tensor<2xi32>", "tensor<2xf32>"], {},
     (OpTypeError, f"operand types tensor<2xi32> and tensor<2xf32> {DIFFERENT}")),
    ("ember.select", ["tensor<4xi1>", "tensor<4xf32>", "tensor<f32>"], {}, ["tensor<4xf32>"]),
    ("ember.select", ["tensor<?x1xi1>", "tensor<1x5xf32>", "tensor<f32>"], {},
     ["tensor<?x5xf32>"]),
    ("ember.select", ["tensor<i1>", "tensor<*x!ember.string>", "tensor<2x!ember.string>"], {},
     ["tensor<*x!ember.string>"]),
    ("ember.select", ["tensor<4xi32>", "tensor<4xf32>", "tensor<f32>"], {},
     (OpTypeError, "condition of type tensor<4xi32> must have i1 elements")),
    ("ember.select", ["tensor<4xi1>", "tensor<4xf32>", "tensor<4xi32>"], {},
     (OpTypeError, f"operand types tensor<4xf32> and tensor<4xi32> {DIFFERENT}")),
    ("ember.select", ["tensor<3xi1>", "tensor<4xf32>", "tensor<f32>"], {},
     (OpShapeError, "operand types tensor<3xi1> and tensor<4xf32> and tensor<f32> are not "
                    "broadcast-compatible")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", UNARY + BINARY + COMPARE_AND_SELECT,
                         ids=ids(UNARY + BINARY + COMPARE_AND_SELECT))
def test_elementwise_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- creation (values-aware ops included) -----------------------------------------------------

CREATION = [
    ("ember.shape", ["tensor<?x4xf32>"], {}, ["tensor<2xi32>"]),
    ("ember.shape", ["tensor<f32>"], {"dtype": "int64"}, ["tensor<0xi64>"]),
    ("ember.shape", ["tensor<*xf32>"], {}, ["tensor<?xi32>"]),
    ("ember.shape", ["tensor<2xf32>"], {"dtype": "float32"},
     (OpAttributeError, "dtype must be i32 or i64, got f32")),
    ("ember.cast", ["tensor<?x2xf32>"], {"dtype": "int8"}, ["tensor<?x2xi8>"]),
    ("ember.cast", ["tensor<*xi1>"], {"dtype": "bfloat16"}, ["tensor<*xbf16>"]),
    ("ember.cast", ["tensor<!ember.string>"], {"dtype": "string"}, ["tensor<!ember.string>"]),
    ("ember.cast", ["tensor<2x!ember.string>"], {"dtype": "int8"},
     (OpTypeError, "cannot cast tensor<2x!ember.string> to i8: strings only cast to strings")),
    ("ember.cast", ["tensor<2xf32>"], {"dtype": "string"},
     (OpTypeError, "cannot cast tensor<2xf32> to !ember.string: strings only cast to strings")),
    ("ember.cast", ["tensor<2xf32>"], {}, (OpAttributeError, "requires attribute 'dtype'")),
    ("ember.cast", ["tensor<2xf32>"], {"dtype": "float8"},
     (OpAttributeError, "attribute 'dtype' expects an ember element type (e.g. `f32`), got "
                        "'float8'")),
    ("ember.random_uniform", ["tensor<2xi64>"], {"shape": [2, 3]}, ["tensor<2x3xf32>"]),
    ("ember.random_uniform", ["tensor<*xi32>"], {"shape": [], "dtype": "float16"},
     ["tensor<f16>"]),
    ("ember.random_normal", ["tensor<2xi32>"], {"shape": [0, 4], "dtype": "float64"},
     ["tensor<0x4xf64>"]),
    ("ember.random_uniform", ["tensor<?xi64>"], {"shape": [2]},
     (OpShapeError, "seed of type tensor<?xi64> must have shape [2]")),
    ("ember.random_uniform", ["tensor<3xi64>"], {"shape": [2]},
     (OpShapeError, "seed of type tensor<3xi64> must have shape [2]")),
    ("ember.random_normal", ["tensor<2xf32>"], {"shape": [1]},
     (OpTypeError, "seed of type tensor<2xf32> must have i32 or i64 elements")),
    ("ember.random_normal", ["tensor<2xi64>"], {"shape": [1], "dtype": "int32"},
     (OpAttributeError, "dtype must be floating-point, got i32")),
    ("ember.random_normal", ["tensor<2xi64>"], {"shape": [-1]},
     (OpAttributeError, "shape [-1] has a negative dimension")),
    ("ember.random_uniform", ["tensor<2xi64>"], {},
     (OpAttributeError, "requires attribute 'shape'")),
    ("ember.random_uniform", ["tensor<2xi64>"], {"shape": [2], "minval": "0"},
     (OpAttributeError, "attribute 'minval' expects a float (e.g. `1.0 : f64`), got '0'")),
    # Philox (the shape operand's value unknown here: `?` dims)
    ("ember.philox_random", ["tensor<3xi64>", "tensor<2xi64>"], {"distribution": "uniform"},
     ["tensor<?x?xf32>"]),
    ("ember.philox_random", ["tensor<*xi64>", "tensor<?xi32>"],
     {"distribution": "bits", "dtype": "int64"}, ["tensor<*xi64>"]),
    ("ember.philox_random", ["tensor<3xi64>", "tensor<0xi32>"],
     {"distribution": "truncated_normal", "dtype": "bfloat16"}, ["tensor<bf16>"]),
    ("ember.philox_random", ["tensor<2xi64>", "tensor<1xi64>"], {"distribution": "normal"},
     (OpShapeError, "state of type tensor<2xi64> must have shape [3]")),
    ("ember.philox_random", ["tensor<3xi32>", "tensor<1xi64>"], {"distribution": "normal"},
     (OpTypeError, "state of type tensor<3xi32> must have i64 elements")),
    ("ember.philox_random", ["tensor<3xi64>", "tensor<1xi64>"], {"distribution": "gamma"},
     (OpAttributeError, "distribution 'gamma' is not one of bits, uniform, normal, "
                        "truncated_normal")),
    ("ember.philox_random", ["tensor<3xi64>", "tensor<1xi64>"], {"distribution": "bits"},
     (OpAttributeError, "bits have dtype i32 or i64, got f32")),
    ("ember.philox_random", ["tensor<3xi64>", "tensor<1xi64>"],
     {"distribution": "normal", "dtype": "int32"},
     (OpAttributeError, "normal numbers have a floating-point dtype, got i32")),
    ("ember.philox_random", ["tensor<3xi64>", "tensor<1xf32>"], {"distribution": "normal"},
     (OpTypeError, "shape of type tensor<1xf32> must have i32 or i64 elements")),
    ("ember.philox_uniform_int", ["tensor<3xi64>", "tensor<1xi64>", "tensor<i32>",
                                  "tensor<i32>"], {}, ["tensor<?xi32>"]),
    ("ember.philox_uniform_int", ["tensor<3xi64>", "tensor<1xi64>", "tensor<i32>",
                                  "tensor<i64>"], {},
     (OpTypeError, "minval tensor<i32> and maxval tensor<i64> must have the same element "
                   "type")),
    ("ember.philox_uniform_int", ["tensor<3xi64>", "tensor<1xi64>", "tensor<f32>",
                                  "tensor<f32>"], {},
     (OpTypeError, "minval of type tensor<f32> must have i32 or i64 elements")),
    ("ember.philox_uniform_int", ["tensor<3xi64>", "tensor<1xi64>", "tensor<2xi32>",
                                  "tensor<i32>"], {},
     (OpShapeError, "minval and maxval must be scalars, got tensor<2xi32>")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", CREATION, ids=ids(CREATION))
def test_creation_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


@pytest.mark.parametrize("value,result", [
    (np.zeros((2, 0), np.int8), "tensor<2x0xi8>"),
    (np.array(1.5, np.float32), "tensor<f32>"),
    (np.array(["a"], object), "tensor<1x!ember.string>"),
    ([[1.0, 2.0]], "tensor<1x2xf64>"),
])
def test_constant_type_is_its_value_type(value, result):
    assert infer("ember.constant", [], {"value": value}) == [result]


@pytest.mark.parametrize("dims,value_type,values,result", [
    ("tensor<2xi64>", "tensor<f32>", None, "tensor<?x?xf32>"),
    ("tensor<2xi64>", "tensor<f32>", (np.array([3, 4]), None), "tensor<3x4xf32>"),
    ("tensor<0xi32>", "tensor<i1>", (np.array([], np.int32), None), "tensor<i1>"),
    ("tensor<3xi32>", "tensor<f16>", (np.array([2, 0, 1], np.int32), np.array(1.0)),
     "tensor<2x0x1xf16>"),
    ("tensor<1xi64>", "tensor<!ember.string>", (None, np.array("a", object)),
     "tensor<?x!ember.string>"),
    # dims of unknown length (em.shape of an unranked tensor): the rank is unknown too
    ("tensor<?xi64>", "tensor<f32>", None, "tensor<*xf32>"),
    ("tensor<*xi64>", "tensor<f32>", None, "tensor<*xf32>"),
    ("tensor<?xi32>", "tensor<f32>", (np.array([2, 1], np.int32), None), "tensor<2x1xf32>"),
    ("tensor<2xi64>", "tensor<*xf32>", None, "tensor<?x?xf32>"),  # a scalar when it runs
])
def test_fill_is_static_when_dims_are_known(dims, value_type, values, result):
    assert infer("ember.fill", [dims, value_type], values=values) == [result]


@pytest.mark.parametrize("dims,value_type,values,error,message", [
    ("tensor<2x1xi64>", "tensor<f32>", None, OpShapeError,
     "shape operand tensor<2x1xi64> must be a 1-D tensor"),
    ("tensor<2xf32>", "tensor<f32>", None, OpTypeError,
     "shape operand of type tensor<2xf32> must have i32 or i64 elements"),
    ("tensor<2xi64>", "tensor<1xf32>", None, OpShapeError,
     "value of type tensor<1xf32> must be a scalar (rank 0)"),
    ("tensor<2xi64>", "tensor<f32>", (np.array([2, -1]), None), OpShapeError,
     "shape operand has a negative dimension -1"),
])
def test_fill_rejects_bad_dims(dims, value_type, values, error, message):
    with pytest.raises(error, match="^" + re.escape(f"'ember.fill' op {message}")):
        infer("ember.fill", [dims, value_type], values=values)


@pytest.mark.parametrize("dims,values,result", [
    ((None, 3), None, "tensor<?x3xf32>"),  # em.zeros([n, 3]): known in part
    ((2, 3), None, "tensor<2x3xf32>"),
])
def test_fill_keeps_the_known_part_of_its_dims(dims, values, result):
    assert infer("ember.fill", ["tensor<2xi32>", "tensor<f32>"], values=(dims, None)) == [result]


B = ("tensor<4x6xf32>", "tensor<2xi32>", "tensor<2xi32>", "tensor<2xi32>")


@pytest.mark.parametrize("masks,values,result", [
    ({"shrink_axis_mask": 1}, (None, None, None, None), "tensor<?xf32>"),  # stride unknown
    ({"shrink_axis_mask": 1, "begin_mask": 2, "end_mask": 2}, (None, None, None, (1, 1)),
     "tensor<6xf32>"),  # x[i, :]
    ({"shrink_axis_mask": 3}, (None, None, None, None), "tensor<f32>"),  # x[i, j]
    ({"end_mask": 2}, (None, (None, 0), (None, 0), (1, 2)), "tensor<?x3xf32>"),  # x[i:j, ::2]
    ({}, (None, (1, 0), (3, 4), (1, 1)), "tensor<2x4xf32>"),  # all known: strided_slice's
    ({"new_axis_mask": 1, "shrink_axis_mask": 2}, (None, None, None, None),
     "tensor<1x6xf32>"),  # x[None, i]
])
def test_dynamic_strided_slice_dims_depend_on_known_bounds(masks, values, result):
    assert infer("ember.dynamic_strided_slice", B, masks, values) == [result]


@pytest.mark.parametrize("operands,masks,values,error,message", [
    (B, {"shrink_axis_mask": 1}, (None, (4, 0), (0, 0), (1, 1)), OpShapeError,
     "index 4 is out of bounds for dim 0 of size 4 in tensor<4x6xf32>"),
    (B, {}, (None, None, None, (1, 0)), OpAttributeError, "strides must be non-zero"),
    (B[:1] + ("tensor<2xf32>",) + B[2:], {}, None, OpTypeError,
     "begin of type tensor<2xf32> must have i32 or i64 elements"),
    (B[:2] + ("tensor<3xi32>",) + B[3:], {}, None, OpShapeError,
     "begin, end and strides must have the same length"),
    (B[:3] + ("tensor<?xi32>",), {}, None, OpShapeError,
     "strides of type tensor<?xi32> must be a 1-D tensor of static size"),
    (("tensor<4xf32>",) + B[1:], {}, None, OpShapeError, "too many indices (2)"),
])
def test_dynamic_strided_slice_rejects(operands, masks, values, error, message):
    with pytest.raises(error, match="^" + re.escape(f"'ember.dynamic_strided_slice' op {message}")):
        infer("ember.dynamic_strided_slice", operands, masks, values)


@pytest.mark.parametrize("op,operands,values,result", [
    ("ember.dynamic_reshape", ["tensor<2x3x2xf32>", "tensor<2xi32>"], None, "tensor<?x?xf32>"),
    ("ember.dynamic_reshape", ["tensor<2x3x2xf32>", "tensor<2xi32>"],
     (None, np.array([-1, 4])), "tensor<3x4xf32>"),
    ("ember.dynamic_reshape", ["tensor<?x3xf32>", "tensor<2xi32>"], (None, (None, 3)),
     "tensor<?x3xf32>"),
    ("ember.dynamic_broadcast_to", ["tensor<3xf32>", "tensor<2xi64>"], (None, (None, None)),
     "tensor<?x3xf32>"),  # an unknown target dim over a static one other than 1 keeps it
    ("ember.dynamic_broadcast_to", ["tensor<1xf32>", "tensor<2xi64>"], (None, (4, None)),
     "tensor<4x?xf32>"),
    ("ember.dynamic_random_uniform", ["tensor<2xi64>", "tensor<2xi32>"], (None, (None, 5)),
     "tensor<?x5xf32>"),
    ("ember.dynamic_random_normal", ["tensor<2xi64>", "tensor<1xi32>"], (None, np.array([6])),
     "tensor<6xf32>"),
])
def test_shape_operand_gives_its_known_dims(op, operands, values, result):
    attrs = {} if "random" not in op else {"dtype": "float32"}
    assert infer(op, operands, attrs, values) == [result]


@pytest.mark.parametrize("op,operands,values,error,message", [
    # a shape known in full is the attribute form's, with its errors (what eager raises)
    ("ember.dynamic_reshape", ["tensor<2x3xf32>", "tensor<2xi32>"], (None, np.array([4, -1])),
     OpShapeError, "'ember.reshape' op cannot reshape tensor<2x3xf32> (6 elements) to [4, -1]"),
    ("ember.dynamic_reshape", ["tensor<2x3xf32>", "tensor<2xi32>"], (None, (-1, -1)),
     OpAttributeError, "shape [-1, -1] may hold at most one -1"),
    ("ember.dynamic_reshape", ["tensor<2x3xf32>", "tensor<2xf32>"], None, OpTypeError,
     "shape of type tensor<2xf32> must have i32 or i64 elements"),
    ("ember.dynamic_broadcast_to", ["tensor<3xf32>", "tensor<2x1xi32>"], None, OpShapeError,
     "shape tensor<2x1xi32> must be a 1-D tensor"),
    ("ember.dynamic_broadcast_to", ["tensor<3xf32>", "tensor<2xi32>"], (None, (None, 4)),
     OpShapeError, "cannot broadcast tensor<3xf32> to a shape with 4 where it has 3"),
    ("ember.dynamic_random_uniform", ["tensor<2xi64>", "tensor<1xi32>"], (None, (-2,)),
     OpShapeError, "shape operand has a negative dimension -2"),
    ("ember.dynamic_random_normal", ["tensor<3xi64>", "tensor<1xi32>"], None, OpShapeError,
     "seed of type tensor<3xi64> must have shape [2]"),
])
def test_shape_operand_rejects(op, operands, values, error, message):
    attrs = {} if "random" not in op else {"dtype": "float32"}
    full = message if message.startswith("'") else f"'{op}' op {message}"
    with pytest.raises(error, match="^" + re.escape(full)):
        infer(op, operands, attrs, values)


S = "tensor<{}>"


@pytest.mark.parametrize("dtype,values,result", [
    ("i32", None, "tensor<?xi32>"),
    ("i32", (np.array(0), None, np.array(1)), "tensor<?xi32>"),
    ("i32", (np.array(0), np.array(5), np.array(1)), "tensor<5xi32>"),
    ("i64", (np.array(2), np.array(10), np.array(3)), "tensor<3xi64>"),
    ("i32", (np.array(10), np.array(2), np.array(-3)), "tensor<3xi32>"),
    ("i32", (np.array(5), np.array(1), np.array(1)), "tensor<0xi32>"),
    ("f32", (np.array(0.0), np.array(1.0), np.array(0.25)), "tensor<4xf32>"),
    ("f64", (np.array(0.0), np.array(1.0), np.array(0.3)), "tensor<4xf64>"),
    ("ui8", (np.array(1), np.array(7), np.array(2)), "tensor<3xui8>"),
])
def test_range_is_static_when_all_values_are_known(dtype, values, result):
    assert infer("ember.range", [S.format(dtype)] * 3, values=values) == [result]


@pytest.mark.parametrize("operands,values,error,message", [
    (["tensor<i32>", "tensor<i64>", "tensor<i32>"], None, OpTypeError,
     "operands tensor<i32>, tensor<i64>, tensor<i32> must have the same element type"),
    (["tensor<1xi32>", "tensor<i32>", "tensor<i32>"], None, OpShapeError,
     "operands must be scalars, got tensor<1xi32>"),
    (["tensor<i1>", "tensor<i1>", "tensor<i1>"], None, OpTypeError,
     "operand of type tensor<i1> must have numeric elements"),
    (["tensor<i32>"] * 3, (np.array(1), np.array(5), np.array(0)), OpAttributeError,
     "delta must not be zero"),
])
def test_range_rejects_bad_operands(operands, values, error, message):
    with pytest.raises(error, match="^" + re.escape(f"'ember.range' op {message}")):
        infer("ember.range", operands, values=values)


# -- reductions ---------------------------------------------------------------------------------

REDUCTION = [
    ("ember.reduce_sum", ["tensor<?x4x5xf32>"], {"axes": [1]}, ["tensor<?x5xf32>"]),
    ("ember.reduce_sum", ["tensor<?x4x5xf32>"], {"axes": [0, -1], "keepdims": True},
     ["tensor<1x4x1xf32>"]),
    ("ember.reduce_prod", ["tensor<2x?xi32>"], {"axes": [0, 1]}, ["tensor<i32>"]),
    ("ember.reduce_mean", ["tensor<2x?xf16>"], {"axes": [-2]}, ["tensor<?xf16>"]),
    ("ember.reduce_max", ["tensor<2x0xbf16>"], {"axes": [1]}, ["tensor<2xbf16>"]),
    ("ember.reduce_min", ["tensor<3xui8>"], {"axes": []}, ["tensor<3xui8>"]),
    ("ember.reduce_sum", ["tensor<*xf32>"], {"axes": [0]}, ["tensor<*xf32>"]),
    ("ember.reduce_any", ["tensor<?x3xi1>"], {"axes": [1], "keepdims": True},
     ["tensor<?x1xi1>"]),
    ("ember.reduce_all", ["tensor<4xi1>"], {"axes": [0]}, ["tensor<i1>"]),
    ("ember.reduce_sum", ["tensor<3xf32>"], {"axes": [1]},
     (OpAttributeError, "axis 1 is out of range for rank 1")),
    ("ember.reduce_max", ["tensor<3x2xf32>"], {"axes": [-3]},
     (OpAttributeError, "axis -3 is out of range for rank 2")),
    ("ember.reduce_sum", ["tensor<3xf32>"], {"axes": [0, -1]},
     (OpAttributeError, "axes [0, -1] contain a duplicate")),
    ("ember.reduce_sum", ["tensor<3xi1>"], {"axes": [0]},
     (OpTypeError, "operand of type tensor<3xi1> must have numeric or complex elements")),
    ("ember.reduce_all", ["tensor<3xf32>"], {"axes": [0]},
     (OpTypeError, "operand of type tensor<3xf32> must have bool (i1) elements")),
    ("ember.reduce_sum", ["tensor<3xf32>"], {}, (OpAttributeError, "requires attribute 'axes'")),
    ("ember.reduce_sum", ["tensor<3xf32>"], {"axes": [0], "bogus": 1},
     (OpAttributeError, "has no attribute 'bogus'; expected ['axes', 'keepdims']")),
    ("ember.reduce_sum", ["tensor<3xf32>"], {"axes": 0},
     (OpAttributeError, "attribute 'axes' expects an `array<i64: ...>`, got 0")),
    ("ember.reduce_sum", ["tensor<3xf32>"], {"axes": [0], "keepdims": 1},
     (OpAttributeError, "attribute 'keepdims' expects a bool (`true` or `false`), got 1")),
    ("ember.argmax", ["tensor<?x3xf32>"], {"axis": 1}, ["tensor<?xi64>"]),
    ("ember.argmin", ["tensor<?x3xf32>"], {"axis": 0, "dtype": "int32"}, ["tensor<3xi32>"]),
    ("ember.argmax", ["tensor<2x?xui8>"], {"axis": -1}, ["tensor<2xi64>"]),
    ("ember.argmax", ["tensor<*xf32>"], {"axis": 0}, ["tensor<*xi64>"]),
    ("ember.argmax", ["tensor<f32>"], {"axis": 0},
     (OpShapeError, "operand of type tensor<f32> must have rank >= 1")),
    ("ember.argmin", ["tensor<2x0xf32>"], {"axis": 1},
     (OpShapeError, "cannot reduce empty dimension 1 of tensor<2x0xf32>")),
    ("ember.argmax", ["tensor<2xf32>"], {"axis": 0, "dtype": "int8"},
     (OpAttributeError, "dtype must be i32 or i64, got i8")),
    ("ember.argmax", ["tensor<2xi1>"], {"axis": 0},
     (OpTypeError, "operand of type tensor<2xi1> must have numeric elements")),
    ("ember.argmax", ["tensor<2xf32>"], {"axis": 1},
     (OpAttributeError, "axis 1 is out of range for rank 1")),
    ("ember.argmax", ["tensor<2xf32>"], {"axis": True},
     (OpAttributeError, "attribute 'axis' expects an integer (e.g. `1 : i64`), got True")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", REDUCTION, ids=ids(REDUCTION))
def test_reduction_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- structure ----------------------------------------------------------------------------------

STRUCTURE = [
    ("ember.matmul", ["tensor<2x3xf32>", "tensor<3x4xf32>"], {}, ["tensor<2x4xf32>"]),
    ("ember.matmul", ["tensor<?x4x3xf32>", "tensor<5x3xf32>"], {"transpose_b": True},
     ["tensor<?x4x5xf32>"]),
    ("ember.matmul", ["tensor<3x2xi8>", "tensor<3x4xi8>"], {"transpose_a": True},
     ["tensor<2x4xi8>"]),
    ("ember.matmul", ["tensor<2x?xf32>", "tensor<4x5xf32>"], {}, ["tensor<2x5xf32>"]),
    ("ember.matmul", ["tensor<1x2x3xf32>", "tensor<?x3x4xf32>"], {}, ["tensor<?x2x4xf32>"]),
    ("ember.matmul", ["tensor<7x1x2x3xf32>", "tensor<5x3x?xf32>"], {}, ["tensor<7x5x2x?xf32>"]),
    ("ember.matmul", ["tensor<*xf32>", "tensor<3x4xf32>"], {}, ["tensor<*xf32>"]),
    ("ember.matmul", ["tensor<2x3xf32>", "tensor<4x5xf32>"], {},
     (OpShapeError, "contraction dims differ: tensor<2x3xf32> has 3, tensor<4x5xf32> has 4")),
    ("ember.matmul", ["tensor<3xf32>", "tensor<3x5xf32>"], {},
     (OpShapeError, "operands tensor<3xf32> and tensor<3x5xf32> must have rank >= 2")),
    ("ember.matmul", ["tensor<2x2x3xf32>", "tensor<3x3x4xf32>"], {},
     (OpShapeError, "batch dims of tensor<2x2x3xf32> and tensor<3x3x4xf32> are not "
                    "broadcast-compatible")),
    ("ember.matmul", ["tensor<2x3xi1>", "tensor<3x4xi1>"], {},
     (OpTypeError, "operands of type tensor<2x3xi1> must have numeric or complex "
                   "elements")),
    ("ember.matmul", ["tensor<2x3xf32>", "tensor<3x4xf16>"], {},
     (OpTypeError, f"operand types tensor<2x3xf32> and tensor<3x4xf16> {DIFFERENT}")),
    ("ember.transpose", ["tensor<?x3x4xf32>"], {"perm": [2, 0, 1]}, ["tensor<4x?x3xf32>"]),
    ("ember.transpose", ["tensor<f32>"], {"perm": []}, ["tensor<f32>"]),
    ("ember.transpose", ["tensor<*xf32>"], {"perm": [1, 0]}, ["tensor<?x?xf32>"]),
    ("ember.transpose", ["tensor<*xf32>"], {"perm": [1, 1]},
     (OpAttributeError, "perm [1, 1] is not a permutation of 0..1 for tensor<*xf32>")),
    ("ember.transpose", ["tensor<2x3xf32>"], {"perm": [0, 2]},
     (OpAttributeError, "perm [0, 2] is not a permutation of 0..1 for tensor<2x3xf32>")),
    ("ember.reshape", ["tensor<2x3x4xf32>"], {"shape": [-1, 4]}, ["tensor<6x4xf32>"]),
    ("ember.reshape", ["tensor<?x3xf32>"], {"shape": [-1, 3]}, ["tensor<?x3xf32>"]),
    ("ember.reshape", ["tensor<?x3xf32>"], {"shape": [3, 2]}, ["tensor<3x2xf32>"]),
    ("ember.reshape", ["tensor<*xf32>"], {"shape": [6]}, ["tensor<6xf32>"]),
    ("ember.reshape", ["tensor<0x3xf32>"], {"shape": [-1, 3]}, ["tensor<0x3xf32>"]),
    ("ember.reshape", ["tensor<1x1xf32>"], {"shape": []}, ["tensor<f32>"]),
    ("ember.reshape", ["tensor<2x3xf32>"], {"shape": [5, -1]},
     (OpShapeError, "cannot reshape tensor<2x3xf32> (6 elements) to [5, -1]")),
    ("ember.reshape", ["tensor<2x3xf32>"], {"shape": [7]},
     (OpShapeError, "cannot reshape tensor<2x3xf32> (6 elements) to [7] (7 elements)")),
    ("ember.reshape", ["tensor<2x3xf32>"], {"shape": [-1, -1]},
     (OpAttributeError, "shape [-1, -1] may hold at most one -1 and no other negative dims")),
    ("ember.broadcast_to", ["tensor<?x1xf32>"], {"shape": [4, 3]}, ["tensor<4x3xf32>"]),
    ("ember.broadcast_to", ["tensor<*xf32>"], {"shape": [4, 3]}, ["tensor<4x3xf32>"]),
    ("ember.broadcast_to", ["tensor<1xf32>"], {"shape": [2, 0]}, ["tensor<2x0xf32>"]),
    ("ember.broadcast_to", ["tensor<2xf32>"], {"shape": [4, 3]},
     (OpShapeError, "cannot broadcast tensor<2xf32> to [4, 3]")),
    ("ember.broadcast_to", ["tensor<2x3xf32>"], {"shape": [3]},
     (OpShapeError, "cannot broadcast tensor<2x3xf32> to lower rank [3]")),
    ("ember.broadcast_to", ["tensor<2xf32>"], {"shape": [-4, 2]},
     (OpAttributeError, "shape [-4, 2] has a negative dimension")),
    ("ember.expand_dims", ["tensor<?x3xf32>"], {"axis": -1}, ["tensor<?x3x1xf32>"]),
    ("ember.expand_dims", ["tensor<f32>"], {"axis": 0}, ["tensor<1xf32>"]),
    ("ember.expand_dims", ["tensor<2xf32>"], {"axis": 2},
     (OpAttributeError, "axis 2 is out of range for rank 2")),
    ("ember.expand_dims", ["tensor<*xf32>"], {"axis": 0}, ["tensor<*xf32>"]),
    ("ember.squeeze", ["tensor<1x?x1xf32>"], {}, ["tensor<?xf32>"]),
    ("ember.squeeze", ["tensor<1x?x1xf32>"], {"axes": [1]}, ["tensor<1x1xf32>"]),
    ("ember.squeeze", ["tensor<1x3x1xf32>"], {"axes": [0, -1]}, ["tensor<3xf32>"]),
    ("ember.squeeze", ["tensor<1x2x1xf32>"], {"axes": [1]},
     (OpShapeError, "cannot squeeze dim 1 of size 2 in tensor<1x2x1xf32>")),
    ("ember.squeeze", ["tensor<1xf32>"], {"axes": [1]},
     (OpAttributeError, "axis 1 is out of range for rank 1")),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<1x3xf32>"], {"dim": 0}, ["tensor<3x3xf32>"]),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<?x3xf32>"], {"dim": 0}, ["tensor<?x3xf32>"]),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<4x?xf32>"], {"dim": 0}, ["tensor<6x3xf32>"]),
    ("tensor.concat", ["tensor<?x?xf32>", "tensor<?x2xf32>"], {"dim": 0}, ["tensor<?x2xf32>"]),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<2x?xf32>", "tensor<2x1xf32>"], {"dim": 1},
     ["tensor<2x?xf32>"]),
    ("tensor.concat", ["tensor<5xi8>"], {"dim": 0}, ["tensor<5xi8>"]),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<4x2xf32>"], {"dim": 0},
     (OpShapeError, "operands differ in dim 1: tensor<2x3xf32>, tensor<4x2xf32>; only dim 0, "
                    "the one joined along, may differ")),
    ("tensor.concat", ["tensor<2x3xf32>", "tensor<3xf32>"], {"dim": 0},
     (OpShapeError, "operands must have the same rank, got tensor<2x3xf32>, tensor<3xf32>")),
    ("tensor.concat", ["tensor<2x3xf32>"], {"dim": 2},
     (OpAttributeError, "dim 2 is out of range for rank 2")),
    ("tensor.concat", ["tensor<2x3xf32>"], {"dim": -1},
     (OpAttributeError, "dim -1 is out of range for rank 2")),
    ("tensor.concat", ["tensor<*xf32>"], {"dim": 0},
     (OpShapeError, "operand of type tensor<*xf32> must be ranked here: give it a known "
                    "rank")),
    ("tensor.concat", [], {"dim": 0}, (OpShapeError, "needs at least one operand")),
    ("tensor.concat", ["tensor<2xf32>", "tensor<2xi32>"], {"dim": 0},
     (OpTypeError, f"operand types tensor<2xf32> and tensor<2xi32> {DIFFERENT}")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", STRUCTURE, ids=ids(STRUCTURE))
def test_structure_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- indexing ----------------------------------------------------------------------------------

def slice_attrs(begin, end, strides, **masks):
    return {"begin": begin, "end": end, "strides": strides, **masks}


INDEXING = [
    ("ember.strided_slice", ["tensor<4x6xf32>"], slice_attrs([1, 0], [3, 0], [1, 2], end_mask=2),
     ["tensor<2x3xf32>"]),
    ("ember.strided_slice", ["tensor<?x6xf32>"], slice_attrs([1, 0], [3, 0], [1, 2], end_mask=2),
     ["tensor<?x3xf32>"]),
    ("ember.strided_slice", ["tensor<?x6xf32>"],
     slice_attrs([0], [0], [1], shrink_axis_mask=1), ["tensor<6xf32>"]),
    ("ember.strided_slice", ["tensor<4x?xf32>"],
     slice_attrs([0, 0], [0, 0], [1, 1], ellipsis_mask=1, new_axis_mask=2),
     ["tensor<4x?x1xf32>"]),
    ("ember.strided_slice", ["tensor<4x6xf32>"],
     slice_attrs([0], [0], [-1], begin_mask=1, end_mask=1), ["tensor<4x6xf32>"]),
    ("ember.strided_slice", ["tensor<4x6xf32>"], slice_attrs([-1], [0], [1],
                                                            shrink_axis_mask=1),
     ["tensor<6xf32>"]),
    ("ember.strided_slice", ["tensor<4x6xf32>"], slice_attrs([5], [2], [1]),
     ["tensor<0x6xf32>"]),
    ("ember.strided_slice", ["tensor<4x6xf32>"], slice_attrs([], [], []), ["tensor<4x6xf32>"]),
    ("ember.strided_slice", ["tensor<4x6xf32>"],
     slice_attrs([4], [5], [1], shrink_axis_mask=1),
     (OpShapeError, "index 4 is out of bounds for dim 0 of size 4 in tensor<4x6xf32>")),
    ("ember.strided_slice", ["tensor<4xf32>"],
     slice_attrs([0, 0], [1, 1], [1, 1], shrink_axis_mask=3),
     (OpShapeError, "too many indices (2) for tensor<4xf32>")),
    ("ember.strided_slice", ["tensor<*xf32>"], slice_attrs([0], [1], [1]), ["tensor<*xf32>"]),
    ("ember.strided_slice", ["tensor<4xf32>"], slice_attrs([0], [1], [0]),
     (OpAttributeError, "strides must be non-zero")),
    ("ember.strided_slice", ["tensor<4xf32>"], slice_attrs([0], [1, 2], [1]),
     (OpAttributeError, "begin, end and strides must have the same length")),
    ("ember.strided_slice", ["tensor<4xf32>"], slice_attrs([0, 0], [0, 0], [1, 1],
                                                          ellipsis_mask=3),
     (OpAttributeError, "at most one ellipsis is allowed")),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<2xi32>"], {}, ["tensor<2x3xf32>"]),
    ("ember.gather", ["tensor<5x?xf32>", "tensor<2x3xi32>"], {"axis": 1},
     ["tensor<5x2x3xf32>"]),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<i64>"], {"axis": -1}, ["tensor<5xf32>"]),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<?xi64>"], {}, ["tensor<?x3xf32>"]),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<*xi64>"], {}, ["tensor<*xf32>"]),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<2xi8>"], {},
     (OpTypeError, "indices of type tensor<2xi8> must have i32 or i64 elements")),
    ("ember.gather", ["tensor<f32>", "tensor<2xi32>"], {},
     (OpShapeError, "params of type tensor<f32> must have rank >= 1")),
    ("ember.gather", ["tensor<*xf32>", "tensor<2xi32>"], {}, ["tensor<*xf32>"]),
    ("ember.gather", ["tensor<5x3xf32>", "tensor<2xi32>"], {"axis": 2},
     (OpAttributeError, "axis 2 is out of range for rank 2")),
    ("ember.one_hot", ["tensor<4xi32>", "tensor<f32>", "tensor<f32>"], {"depth": 3},
     ["tensor<4x3xf32>"]),
    ("ember.one_hot", ["tensor<?x4xi32>", "tensor<f32>", "tensor<f32>"],
     {"depth": 3, "axis": 1}, ["tensor<?x3x4xf32>"]),
    ("ember.one_hot", ["tensor<?xui8>", "tensor<i1>", "tensor<i1>"], {"depth": 2, "axis": 0},
     ["tensor<2x?xi1>"]),
    ("ember.one_hot", ["tensor<i64>", "tensor<f16>", "tensor<f16>"], {"depth": 0},
     ["tensor<0xf16>"]),
    ("ember.one_hot", ["tensor<4xi32>", "tensor<f32>", "tensor<f64>"], {"depth": 3},
     (OpTypeError, f"operand types tensor<f32> and tensor<f64> {DIFFERENT}")),
    ("ember.one_hot", ["tensor<4xf32>", "tensor<f32>", "tensor<f32>"], {"depth": 3},
     (OpTypeError, "indices of type tensor<4xf32> must have i8, ui8, i32 or i64 elements")),
    ("ember.one_hot", ["tensor<4xi8>", "tensor<f32>", "tensor<f32>"], {"depth": 3},
     ["tensor<4x3xf32>"]),
    ("ember.one_hot", ["tensor<4xi32>", "tensor<1xf32>", "tensor<f32>"], {"depth": 3},
     (OpShapeError, "on_value tensor<1xf32> and off_value tensor<f32> must be scalars")),
    ("ember.one_hot", ["tensor<4xi32>", "tensor<f32>", "tensor<f32>"], {"depth": -2},
     (OpAttributeError, "depth must be >= 0, got -2")),
    ("ember.one_hot", ["tensor<*xi32>", "tensor<f32>", "tensor<f32>"], {"depth": 3},
     ["tensor<*xf32>"]),
    ("ember.one_hot", ["tensor<4xi32>", "tensor<f32>", "tensor<f32>"], {},
     (OpAttributeError, "requires attribute 'depth'")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [1, 1, 0, 2]},
     ["tensor<4x5xf32>"]),
    ("ember.pad", ["tensor<?x3xf32>", "tensor<f32>"], {"paddings": [1, 1, 0, 2]},
     ["tensor<?x5xf32>"]),
    ("ember.pad", ["tensor<?x3xi8>", "tensor<i8>"], {"paddings": [9, 9, 2, 2],
                                                       "mode": "REFLECT"}, ["tensor<?x7xi8>"]),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [2, 0, 0, 3],
                                                        "mode": "SYMMETRIC"},
     ["tensor<4x6xf32>"]),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [2, 0, 0, 0],
                                                        "mode": "REFLECT"},
     (OpShapeError, "REFLECT padding 2,0 of dim 0 exceeds 1 for tensor<2x3xf32>")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [0, 0, 0, 4],
                                                        "mode": "SYMMETRIC"},
     (OpShapeError, "SYMMETRIC padding 0,4 of dim 1 exceeds 3 for tensor<2x3xf32>")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [1, 1]},
     (OpAttributeError, "paddings must be 4 non-negative ints (before, after per dim) for "
                        "tensor<2x3xf32>, got [1, 1]")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<f32>"], {"paddings": [0, 0, 0, 0],
                                                        "mode": "WRAP"},
     (OpAttributeError, "mode must be one of ['CONSTANT', 'REFLECT', 'SYMMETRIC'], got 'WRAP'")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<1xf32>"], {"paddings": [0, 0, 0, 0]},
     (OpShapeError, "constant_value tensor<1xf32> must be a scalar")),
    ("ember.pad", ["tensor<2x3xf32>", "tensor<i32>"], {"paddings": [0, 0, 0, 0]},
     (OpTypeError, f"operand types tensor<2x3xf32> and tensor<i32> {DIFFERENT}")),
    ("ember.pad", ["tensor<*xf32>", "tensor<f32>"], {"paddings": [1, 1]}, ["tensor<?xf32>"]),
    ("ember.pad", ["tensor<*xf32>", "tensor<f32>"], {"paddings": [1, 1, 0]},
     (OpAttributeError, "paddings must be 2 non-negative ints (before, after per dim) for "
                        "tensor<?xf32>, got [1, 1, 0]")),
    # tensor_scatter: updates have shape indices.shape[:-1] + tensor.shape[k:]
    ("ember.tensor_scatter", ["tensor<5x3xf32>", "tensor<2x1xi32>", "tensor<2x3xf32>"],
     {"mode": "add"}, ["tensor<5x3xf32>"]),
    ("ember.tensor_scatter", ["tensor<?x3xi8>", "tensor<?x2x2xi64>", "tensor<?x2xi8>"],
     {}, ["tensor<?x3xi8>"]),
    ("ember.tensor_scatter", ["tensor<4xi1>", "tensor<1xi32>", "tensor<i1>"], {},
     ["tensor<4xi1>"]),
    ("ember.tensor_scatter", ["tensor<*xf32>", "tensor<2x1xi32>", "tensor<2xf32>"],
     {"mode": "max"}, ["tensor<*xf32>"]),
    ("ember.tensor_scatter", ["tensor<4xi1>", "tensor<1xi32>", "tensor<i1>"],
     {"mode": "add"}, (OpTypeError, "mode 'add' needs numeric elements, got tensor<4xi1>")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<1xi32>", "tensor<f32>"],
     {"mode": "div"}, (OpAttributeError, "mode must be one of ['update', 'add', 'sub', "
                                         "'mul', 'max', 'min'], got 'div'")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<2x1xi8>", "tensor<2xf32>"], {},
     (OpTypeError, "indices of type tensor<2x1xi8> must have i32 or i64 elements")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<2x1xi32>", "tensor<2xf64>"], {},
     (OpTypeError, f"operand types tensor<4xf32> and tensor<2xf64> {DIFFERENT}")),
    ("ember.tensor_scatter", ["tensor<4x3xf32>", "tensor<2x1xi32>", "tensor<2x4xf32>"], {},
     (OpShapeError, "updates of type tensor<2x4xf32> must have shape indices.shape[:-1] + "
                    "tensor.shape[1:] = [2x3] for tensor tensor<4x3xf32> and indices "
                    "tensor<2x1xi32>")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<2x2xi32>", "tensor<2xf32>"], {},
     (OpShapeError, "index depth 2 of tensor<2x2xi32> exceeds the rank of tensor<4xf32>")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<2x?xi32>", "tensor<2xf32>"], {},
     (OpShapeError, "the last dim of indices (tensor<2x?xi32>) is the index depth and must "
                    "be static")),
    ("ember.tensor_scatter", ["tensor<f32>", "tensor<0xi32>", "tensor<f32>"], {},
     (OpShapeError, "tensor of type tensor<f32> must have rank >= 1")),
    ("ember.tensor_scatter", ["tensor<4xf32>", "tensor<i32>", "tensor<f32>"], {},
     (OpShapeError, "indices of type tensor<i32> must have rank >= 1")),
    # where_indices: one row per true element, known only when it runs
    ("ember.where_indices", ["tensor<3x4xi1>"], {}, ["tensor<?x2xi64>"]),
    ("ember.where_indices", ["tensor<?xf32>"], {}, ["tensor<?x1xi64>"]),
    ("ember.where_indices", ["tensor<i8>"], {}, ["tensor<?x0xi64>"]),
    ("ember.where_indices", ["tensor<*xi1>"], {}, ["tensor<?x?xi64>"]),
]


@pytest.mark.parametrize("op,operands,attrs,expected", INDEXING, ids=ids(INDEXING))
def test_indexing_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- nn -----------------------------------------------------------------------------------------

NN = [
    ("ember.conv2d", ["tensor<1x5x5x3xf32>", "tensor<3x3x3x8xf32>"], {"padding": "SAME"},
     ["tensor<1x5x5x8xf32>"]),
    ("ember.conv2d", ["tensor<1x5x5x3xf32>", "tensor<3x3x3x8xf32>"], {},
     ["tensor<1x3x3x8xf32>"]),
    ("ember.conv2d", ["tensor<?x7x6x3xf32>", "tensor<3x2x3x4xf32>"], {"strides": [2, 3]},
     ["tensor<?x3x2x4xf32>"]),
    ("ember.conv2d", ["tensor<2x7x6x3xf16>", "tensor<3x2x3x4xf16>"],
     {"strides": [2, 2], "padding": "SAME"}, ["tensor<2x4x3x4xf16>"]),
    ("ember.conv2d", ["tensor<1x?x8x2xf32>", "tensor<3x3x2x3xf32>"],
     {"dilations": [2, 2], "padding": "VALID"}, ["tensor<1x?x4x3xf32>"]),
    ("ember.conv2d", ["tensor<1x4x4x?xf32>", "tensor<3x3x2x?xf32>"], {},
     ["tensor<1x2x2x?xf32>"]),
    ("ember.conv2d", ["tensor<1x2x2x2xf32>", "tensor<3x3x2x3xf32>"], {},
     ["tensor<1x0x0x3xf32>"]),
    # TensorFlow's (size - window + stride) / stride, toward zero: -1 is an error
    ("ember.conv2d", ["tensor<1x3x3x1xf32>", "tensor<5x5x1x1xf32>"], {},
     (OpShapeError, "input of shape (1, 3, 3, 1): Computed output size would be negative: -1 "
                    "[input_size: 3, effective_filter_size: 5, stride: 1]")),
    ("ember.conv2d", ["tensor<1x3x9x1xf32>", "tensor<2x3x1x1xf32>"], {"dilations": [1, 5]},
     (OpShapeError, "input of shape (1, 3, 9, 1): Computed output size would be negative: -1 "
                    "[input_size: 9, effective_filter_size: 11, stride: 1]")),
    ("ember.max_pool2d", ["tensor<1x2x2x1xf32>"], {"ksize": [4, 4], "strides": [4, 4]},
     ["tensor<1x0x0x1xf32>"]),
    ("ember.avg_pool2d", ["tensor<1x2x6x1xf32>"], {"ksize": [7, 1], "strides": [2, 2]},
     (OpShapeError, "input of shape (1, 2, 6, 1): Computed output size would be negative: -1 "
                    "[input_size: 2, effective_filter_size: 7, stride: 2]")),
    ("ember.conv2d", ["tensor<1x4x4x2xf32>", "tensor<?x3x2x3xf32>"], {},
     (OpShapeError, "filter tensor<?x3x2x3xf32> must be rank 4 (HWIO) with static H, W")),
    ("ember.conv2d", ["tensor<*xf32>", "tensor<3x3x2x3xf32>"], {}, ["tensor<?x?x?x3xf32>"]),
    ("ember.conv2d", ["tensor<1x4x4x2xf32>", "tensor<*xf32>"], {}, ["tensor<1x?x?x?xf32>"]),
    ("ember.conv2d", ["tensor<1x4x2xf32>", "tensor<*xf32>"], {},
     (OpShapeError, "input tensor<1x4x2xf32> must be rank 4 (NHWC)")),
    ("ember.conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x3x1xf32>"], {},
     (OpShapeError, "input channels of tensor<1x4x4x2xf32> (2) differ from filter input "
                    "channels of tensor<3x3x3x1xf32> (3)")),
    ("ember.conv2d", ["tensor<1x4x4x2xi32>", "tensor<3x3x2x1xi32>"], {},
     (OpTypeError, "operands of type tensor<1x4x4x2xi32> must have floating-point elements")),
    ("ember.conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x2x1xf32>"], {"strides": [1]},
     (OpAttributeError, "strides must be two positive ints (height, width) below 2**31, got [1]")),
    ("ember.conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x2x1xf32>"], {"padding": "same"},
     (OpAttributeError, "padding must be \"SAME\" or \"VALID\", got 'same'")),
    ("ember.depthwise_conv2d", ["tensor<1x5x5x3xf32>", "tensor<3x3x3x2xf32>"],
     {"padding": "SAME"}, ["tensor<1x5x5x6xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<?x7x6x3xf16>", "tensor<3x2x3x1xf16>"],
     {"strides": [2, 3], "dilations": [1, 2]}, ["tensor<?x3x2x3xf16>"]),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x?xf32>", "tensor<3x3x2x4xf32>"], {},
     ["tensor<1x2x2x8xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x?x4xf32>"], {},
     ["tensor<1x2x2x8xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x?xf32>", "tensor<3x3x?x4xf32>"], {},
     ["tensor<1x2x2x?xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<*xf32>", "tensor<3x3x2x3xf32>"], {},
     ["tensor<?x?x?x6xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xf32>", "tensor<*xf32>"], {},
     ["tensor<1x?x?x?xf32>"]),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x3x1xf32>"], {},
     (OpShapeError, "input channels of tensor<1x4x4x2xf32> (2) differ from filter channels "
                    "of tensor<3x3x3x1xf32> (3)")),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xf32>", "tensor<0x3x2x1xf32>"], {},
     (OpShapeError, "filter tensor<0x3x2x1xf32> must be rank 4 (HWCM) with static, non-zero")),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xi32>", "tensor<3x3x2x1xi32>"], {},
     (OpTypeError, "operands of type tensor<1x4x4x2xi32> must have floating-point elements")),
    ("ember.depthwise_conv2d", ["tensor<1x4x4x2xf32>", "tensor<3x3x2x1xf32>"],
     {"dilations": [0, 1]},
     (OpAttributeError, "dilations must be two positive ints (height, width) below 2**31, "
                        "got [0, 1]")),
    ("ember.max_pool2d", ["tensor<1x4x4x3xf32>"], {"ksize": [2, 2], "strides": [2, 2]},
     ["tensor<1x2x2x3xf32>"]),
    ("ember.avg_pool2d", ["tensor<?x5x7x3xf16>"],
     {"ksize": [3, 2], "strides": [2, 3], "padding": "SAME"}, ["tensor<?x3x3x3xf16>"]),
    ("ember.max_pool2d", ["tensor<1x?x4x3xi8>"], {"ksize": [2, 2], "strides": [1, 1]},
     ["tensor<1x?x3x3xi8>"]),
    ("ember.max_pool2d", ["tensor<1x4x4x3xi1>"], {"ksize": [2, 2], "strides": [2, 2]},
     (OpTypeError, "operand of type tensor<1x4x4x3xi1> must have numeric elements")),
    ("ember.avg_pool2d", ["tensor<*xf32>"], {"ksize": [2, 2], "strides": [2, 2]},
     ["tensor<?x?x?x?xf32>"]),
    ("ember.avg_pool2d", ["tensor<1x4x4x3xf32>"], {"ksize": [2, 0], "strides": [2, 2]},
     (OpAttributeError, "ksize must be two positive ints (height, width) below 2**31, got [2, 0]")),
    ("ember.max_pool2d", ["tensor<1x4x4x3xf32>"], {"ksize": [2, 2]},
     (OpAttributeError, "requires attribute 'strides'")),
    ("ember.softmax", ["tensor<?x10xf32>"], {"axis": 1}, ["tensor<?x10xf32>"]),
    ("ember.softmax", ["tensor<*xbf16>"], {"axis": 5}, ["tensor<*xbf16>"]),
    ("ember.log_softmax", ["tensor<2x?xf64>"], {}, ["tensor<2x?xf64>"]),
    ("ember.log_softmax", ["tensor<f32>"], {},
     (OpShapeError, "operand tensor<f32> must have rank >= 1")),
    ("ember.softmax", ["tensor<2xf32>"], {"axis": 1},
     (OpAttributeError, "axis 1 is out of range for rank 1")),
    ("ember.softmax", ["tensor<2xi32>"], {},
     (OpTypeError, "operand of type tensor<2xi32> must have floating-point elements")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", NN, ids=ids(NN))
def test_nn_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- state ----------------------------------------------------------------------------------------

STATE = [
    ("ember.read_variable", ["!ember.resource<tensor<2xf32>>"], {}, ["tensor<2xf32>"]),
    ("ember.read_variable", ["!ember.resource<tensor<*xi32>>"], {}, ["tensor<*xi32>"]),
    ("ember.read_variable", ["tensor<2xf32>"], {},
     (OpTypeError, "operand 'resource' must be a variable resource, got tensor<2xf32>")),
    ("ember.assign_variable", ["!ember.resource<tensor<?xf32>>", "tensor<3xf32>"], {}, []),
    ("ember.assign_variable", ["!ember.resource<tensor<2x!ember.string>>",
                               "tensor<2x!ember.string>"], {}, []),
    ("ember.assign_add_variable", ["!ember.resource<tensor<i32>>", "tensor<i32>"], {}, []),
    ("ember.assign_sub_variable", ["!ember.resource<tensor<*xf32>>", "tensor<2xf32>"], {}, []),
    ("ember.assign_variable", ["!ember.resource<tensor<2xf32>>", "tensor<3xf32>"], {},
     (OpShapeError, "value of type tensor<3xf32> does not fit the variable's shape "
                    "tensor<2xf32>")),
    ("ember.assign_variable", ["!ember.resource<tensor<2xf32>>", "tensor<2xf64>"], {},
     (OpTypeError, "value of type tensor<2xf64> does not match the variable's type "
                   "tensor<2xf32>")),
    ("ember.assign_variable", ["tensor<2xf32>", "tensor<2xf32>"], {},
     (OpTypeError, "operand 'resource' must be a variable resource, got tensor<2xf32>")),
    ("ember.assign_variable", ["!ember.resource<tensor<2xf32>>",
                               "!ember.resource<tensor<2xf32>>"], {},
     (OpTypeError, "operand 'value' must be a tensor, got !ember.resource<tensor<2xf32>>")),
    ("ember.assign_add_variable", ["!ember.resource<tensor<2xi1>>", "tensor<2xi1>"], {},
     (OpTypeError, "value of type tensor<2xi1> must have numeric elements")),
    ("ember.assign_sub_variable", ["!ember.resource<tensor<!ember.string>>",
                                   "tensor<!ember.string>"], {},
     (OpTypeError, "value of type tensor<!ember.string> must have numeric elements")),
    ("ember.print", ["tensor<2xf32>"], {}, []),
    ("ember.print", ["tensor<*x!ember.string>"], {"format": "s = {}!", "stream": "stdout"}, []),
    ("ember.print", ["tensor<2xf32>"], {"format": "x"}, []),  # text only: x not shown
    ("ember.print", ["tensor<2xf32>"], {"format": "{} {}"},
     (OpAttributeError, "format must contain at most one {}, got '{} {}'")),
    ("ember.print", ["tensor<2xf32>"], {"stream": "file"},
     (OpAttributeError, "stream must be \"stderr\" or \"stdout\", got 'file'")),
    ("ember.assert", ["tensor<i1>"], {}, []),
    ("ember.assert", ["tensor<*xi1>"], {"message": "x > 0"}, []),
    ("ember.assert", ["tensor<2xf32>"], {},
     (OpTypeError, "condition must be a bool tensor, got tensor<2xf32>")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", STATE, ids=ids(STATE))
def test_state_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


SL = ("tensor<4x6xf32>", "tensor<2xi32>", "tensor<2xi32>")


@pytest.mark.parametrize("operands,values,result", [
    (SL, (None, None, (2, 3)), "tensor<2x3xf32>"),  # a known size is a static dim
    (SL, (None, None, (None, -1)), "tensor<?x?xf32>"),  # the rest from an unknown begin
    (SL, (None, (1, 2), (-1, 4)), "tensor<3x4xf32>"),
    (SL, (None, (4, 6), (0, -1)), "tensor<0x0xf32>"),  # begin may be the dim's size
    (("tensor<?x6xf32>",) + SL[1:], (None, (None, 2), (2, -1)), "tensor<2x4xf32>"),
    (("tensor<*xf32>",) + SL[1:], (None, None, None), "tensor<*xf32>"),
])
def test_slice_dims_are_the_known_sizes(operands, values, result):
    assert infer("ember.slice", operands, {}, values) == [result]


@pytest.mark.parametrize("operands,values,message", [
    (SL, (None, (5, 0), None), "begin[0] = 5 is outside [0, 4] for dim 0 of tensor<4x6xf32>"),
    (SL, (None, (-1, 0), None), "begin[0] = -1 is outside [0, 4]"),
    (SL, (None, (3, 0), (2, 6)), "size[0] = 2 is outside [0, 1]: dim 0 of tensor<4x6xf32> has 1 "
                                "element from begin[0] = 3 on (a size of -1 takes the rest)"),
    (SL, (None, (1, 0), (4, 6)), "size[0] = 4 is outside [0, 3]: dim 0 of tensor<4x6xf32> has 3 "
                                "elements from begin[0] = 1 on"),
    (SL, (None, None, (1, 7)), "size[1] = 7 is outside [0, 6]: dim 1 of tensor<4x6xf32>"),
    (SL, (None, None, (-2, 1)), "size[0] = -2 is outside [0, 4]"),
    (("tensor<6xf32>",) + SL[1:], None, "begin and size must have one element per dim of "
                                       "tensor<6xf32>, got 2"),
    (SL[:2] + ("tensor<3xi32>",), None, "begin and size must have the same length"),
])
def test_slice_rejects_bounds_outside_the_dim(operands, values, message):
    with pytest.raises(OpShapeError, match="^" + re.escape(f"'ember.slice' op {message}")):
        infer("ember.slice", operands, {}, values)


# -- complex dtypes (issue 13) ---------------------------------------------------------------

C64, C128 = "complex<f32>", "complex<f64>"
ORDERING = "must have numeric (integer or floating-point) elements"
COMPLEX = [
    ("ember.complex", ["tensor<2x?xf32>", "tensor<f32>"], {}, [f"tensor<2x?x{C64}>"]),
    ("ember.complex", ["tensor<*xf64>", "tensor<3xf64>"], {}, [f"tensor<*x{C128}>"]),
    ("ember.complex", ["tensor<2xf16>", "tensor<2xf16>"], {},
     (OpTypeError, "operands of type tensor<2xf16> and tensor<2xf16> must have float32 or "
                   "float64 elements")),
    ("ember.complex", ["tensor<2xf32>", "tensor<2xf64>"], {}, (OpTypeError, "operand types")),
    ("ember.complex", ["tensor<2xf32>", "tensor<3xf32>"], {},
     (OpShapeError, "operand types tensor<2xf32> and tensor<3xf32> are not broadcast-compatible")),
    ("ember.real", [f"tensor<?x3x{C64}>"], {}, ["tensor<?x3xf32>"]),
    ("ember.imag", [f"tensor<*x{C128}>"], {}, ["tensor<*xf64>"]),
    ("ember.angle", [f"tensor<0x{C64}>"], {}, ["tensor<0xf32>"]),
    ("ember.conj", [f"tensor<4x{C128}>"], {}, [f"tensor<4x{C128}>"]),
    ("ember.real", ["tensor<4xf32>"], {},
     (OpTypeError, "operand of type tensor<4xf32> must have complex (complex64 or complex128) "
                   "elements")),
    ("ember.fft", [f"tensor<3x?x{C64}>"], {}, [f"tensor<3x?x{C64}>"]),
    ("ember.ifft", [f"tensor<*x{C128}>"], {}, [f"tensor<*x{C128}>"]),
    ("ember.fft", ["tensor<8xf32>"], {},
     (OpTypeError, "operand of type tensor<8xf32> must have complex (complex64 or complex128) "
                   "elements")),
    ("ember.fft", [f"tensor<{C64}>"], {},
     (OpShapeError, f"operand of type tensor<{C64}> must have rank >= 1")),
    ("ember.rfft", ["tensor<2x6xf32>"], {}, [f"tensor<2x4x{C64}>"]),
    ("ember.rfft", ["tensor<2x?xf64>"], {"fft_length": 9}, [f"tensor<2x5x{C128}>"]),
    ("ember.rfft", ["tensor<?xf32>"], {}, [f"tensor<?x{C64}>"]),
    ("ember.rfft", ["tensor<4xi32>"], {},
     (OpTypeError, "operand of type tensor<4xi32> must have float32 or float64 elements")),
    ("ember.rfft", ["tensor<4xf32>"], {"fft_length": -2},
     (OpAttributeError, "fft_length -2 must be >= 0")),
    ("ember.irfft", [f"tensor<2x5x{C64}>"], {}, ["tensor<2x8xf32>"]),
    ("ember.irfft", [f"tensor<?x{C128}>"], {"fft_length": 7}, ["tensor<7xf64>"]),
    ("ember.irfft", [f"tensor<?x{C128}>"], {}, ["tensor<?xf64>"]),
    ("ember.irfft", [f"tensor<0x{C64}>"], {}, ["tensor<0xf32>"]),
    # existing ops: complex where TensorFlow's kernels take it, a clear error elsewhere
    ("ember.abs", [f"tensor<?x{C64}>"], {}, ["tensor<?xf32>"]),
    ("ember.exp", [f"tensor<2x{C128}>"], {}, [f"tensor<2x{C128}>"]),
    ("ember.div", [f"tensor<2x{C64}>", f"tensor<{C64}>"], {}, [f"tensor<2x{C64}>"]),
    ("ember.equal", [f"tensor<2x{C64}>", f"tensor<2x{C64}>"], {}, ["tensor<2xi1>"]),
    ("ember.reduce_mean", [f"tensor<2x3x{C64}>"], {"axes": [1]}, [f"tensor<2x{C64}>"]),
    ("ember.matmul", [f"tensor<2x3x{C128}>", f"tensor<3x4x{C128}>"], {}, [f"tensor<2x4x{C128}>"]),
    ("ember.cast", [f"tensor<2x{C64}>"], {"dtype": "int32"}, ["tensor<2xi32>"]),
    ("ember.less", [f"tensor<2x{C64}>", f"tensor<2x{C64}>"], {},
     (OpTypeError, f"operands of type tensor<2x{C64}> {ORDERING}")),
    ("ember.maximum", [f"tensor<2x{C64}>", f"tensor<2x{C64}>"], {},
     (OpTypeError, f"operands of type tensor<2x{C64}> {ORDERING}")),
    ("ember.floor", [f"tensor<2x{C64}>"], {},
     (OpTypeError, f"operand of type tensor<2x{C64}> must have floating-point elements")),
    ("ember.relu", [f"tensor<2x{C128}>"], {},
     (OpTypeError, f"operand of type tensor<2x{C128}> {ORDERING}")),
    ("ember.reduce_max", [f"tensor<2x{C64}>"], {"axes": [0]},
     (OpTypeError, f"operand of type tensor<2x{C64}> must have numeric elements")),
    ("ember.softmax", [f"tensor<2x{C64}>"], {"axis": -1},
     (OpTypeError, f"operand of type tensor<2x{C64}> must have floating-point elements")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", COMPLEX, ids=ids(COMPLEX))
def test_complex_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


# -- every op is exercised by a table above ----------------------------------------------------

def test_every_registered_op_has_an_inference_row():
    rows = UNARY + BINARY + COMPARE_AND_SELECT + CREATION + REDUCTION + STRUCTURE + INDEXING + NN
    rows += STATE
    rows += SCAN
    rows += SORTING
    rows += COMPLEX
    covered = {r[0] for r in rows} | {"ember.constant", "ember.fill", "ember.range",
                                       "ember.dynamic_strided_slice", "ember.slice",
                                       "ember.dynamic_reshape",
                                       "ember.dynamic_broadcast_to", "ember.dynamic_random_uniform",
                                       "ember.dynamic_random_normal"}
    assert sorted(set(REGISTRY) - covered) == []


def test_results_are_tuples_even_for_single_results():
    spec = REGISTRY["ember.add"]
    t = parse_type("tensor<2xf32>")
    assert spec.infer_types((t, t), spec.normalize_attrs({})) == (t,)
    print_spec = REGISTRY["ember.print"]
    assert print_spec.infer_types((t,), print_spec.normalize_attrs({})) == ()


# -- scans and sorted search (dialects/ember/scan.py) ------------------------------------------

SCAN = [
    ("ember.cumsum", ["tensor<2x?xf32>"], {"axis": 1, "reverse": True}, ["tensor<2x?xf32>"]),
    ("ember.cumsum", ["tensor<0xbf16>"], {"axis": -1}, ["tensor<0xbf16>"]),
    ("ember.cumprod", ["tensor<*xui8>"], {"axis": 5, "exclusive": True}, ["tensor<*xui8>"]),
    ("ember.cumprod", ["tensor<3x4xi64>"], {"axis": -2}, ["tensor<3x4xi64>"]),
    ("ember.cumsum", ["tensor<3x4xf16>"], {"axis": 2},
     (OpAttributeError, "axis 2 is out of range for rank 2")),
    ("ember.cumprod", ["tensor<f32>"], {},
     (OpAttributeError, "axis 0 is out of range for rank 0: a scan needs an operand of "
                        "rank >= 1")),
    ("ember.cumsum", ["tensor<3xi1>"], {},
     (OpTypeError, "operand of type tensor<3xi1> must have numeric (integer or "
                   "floating-point) elements")),
    ("ember.searchsorted", ["tensor<2x5xf32>", "tensor<2x3xf32>"], {}, ["tensor<2x3xi32>"]),
    ("ember.searchsorted", ["tensor<?x5xi8>", "tensor<4x?xi8>"], {"out_type": "int64"},
     ["tensor<4x?xi64>"]),
    ("ember.searchsorted", ["tensor<*xf64>", "tensor<7xf64>"], {"side": "right"},
     ["tensor<7xi32>"]),
    ("ember.searchsorted", ["tensor<2x5xf32>", "tensor<3x3xf32>"], {},
     (OpShapeError, "sorted_sequence tensor<2x5xf32> and values tensor<3x3xf32> must have "
                    "the same rank and leading dims (all but the last)")),
    ("ember.searchsorted", ["tensor<5xf32>", "tensor<f32>"], {},
     (OpShapeError, "values of type tensor<f32> must have rank >= 1")),
    ("ember.searchsorted", ["tensor<5xf32>", "tensor<3xf32>"], {"side": "middle"},
     (OpAttributeError, "side must be 'left' or 'right', got 'middle'")),
    ("ember.searchsorted", ["tensor<5xf32>", "tensor<3xf32>"], {"out_type": "int16"},
     (OpAttributeError, "out_type must be i32 or i64, got i16")),
    ("ember.searchsorted", ["tensor<5xf32>", "tensor<3xf64>"], {},
     (OpTypeError, "operand types tensor<5xf32> and tensor<3xf64> " + DIFFERENT)),
]


@pytest.mark.parametrize("op,operands,attrs,expected", SCAN, ids=ids(SCAN))
def test_scan_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)
# -- sorting ------------------------------------------------------------------------------

SORTING = [
    ("ember.sort", ["tensor<3x5xf32>"], {}, ["tensor<3x5xf32>", "tensor<3x5xi32>"]),
    ("ember.sort", ["tensor<?x?xbf16>"], {"descending": True},
     ["tensor<?x?xbf16>", "tensor<?x?xi32>"]),
    ("ember.sort", ["tensor<0xui8>"], {}, ["tensor<0xui8>", "tensor<0xi32>"]),
    ("ember.sort", ["tensor<*xi64>"], {}, ["tensor<*xi64>", "tensor<*xi32>"]),
    ("ember.sort", ["tensor<f32>"], {},
     (OpShapeError, "input of type tensor<f32> must have rank >= 1")),
    ("ember.sort", ["tensor<4xi1>"], {},
     (OpTypeError, "input of type tensor<4xi1> must have integer or float elements")),
    ("ember.sort", ["tensor<4xf32>"], {"descending": 1},
     (OpAttributeError, "attribute 'descending' expects a bool (`true` or `false`), got 1")),
    ("ember.unique", ["tensor<6xf32>"], {}, ["tensor<?xf32>", "tensor<6xi32>"]),
    ("ember.unique", ["tensor<?xi1>"], {"out_idx": "int64"}, ["tensor<?xi1>", "tensor<?xi64>"]),
    ("ember.unique", ["tensor<*xui8>"], {}, ["tensor<*xui8>", "tensor<?xi32>"]),
    ("ember.unique", ["tensor<2x3xf32>"], {},
     (OpShapeError, "input of type tensor<2x3xf32> must be 1-D")),
    ("ember.unique", ["tensor<3xf32>"], {"out_idx": "int8"},
     (OpAttributeError, "out_idx must be i32 or i64, got i8")),
]


@pytest.mark.parametrize("op,operands,attrs,expected", SORTING, ids=ids(SORTING))
def test_sorting_inference(op, operands, attrs, expected):
    check(op, operands, attrs, expected)


def test_sort_refuses_rows_longer_than_int32_indices_count():
    check("ember.sort", ["tensor<2x2147483648xi8>"], {},
          (OpShapeError, "input of type tensor<2x2147483648xi8> has more elements in its "
                         "last dim than int32 indices count"))
    assert infer("ember.sort", ["tensor<2147483647xi8>"]) == ["tensor<2147483647xi8>",
                                                              "tensor<2147483647xi32>"]
