"""Differential tests of the nn lowering rules (conv2d, depthwise_conv2d, max_pool2d,
avg_pool2d, softmax, log_softmax): compiled results against each op's numpy reference kernel, as in
test_lowering_structure; plus the errors for shapes the rules cannot lower.
"""

import numpy as np
import pytest

from ember.dialects.ember import nn as N
from ember.passes.conversions.ember_to_linalg.nn import window_counts
from ember.passes.pipeline import PassFailure
from lowering_harness import lower
from test_lowering_structure import check, ember_text, random_array


@pytest.mark.parametrize("x,f,strides,dilations,padding,dtype,dynamic", [
    ((1, 5, 5, 3), (3, 3, 3, 8), (1, 1), (1, 1), "SAME", "float32", ()),
    ((1, 5, 5, 3), (3, 3, 3, 8), (1, 1), (1, 1), "VALID", "float32", ()),
    ((2, 5, 6, 3), (3, 2, 3, 4), (2, 2), (1, 1), "SAME", "float64", ()),
    ((1, 9, 7, 2), (3, 3, 2, 4), (1, 1), (2, 2), "VALID", "float32", ()),
    ((1, 8, 8, 2), (2, 3, 2, 3), (3, 2), (2, 1), "SAME", "float32", ()),
    ((1, 6, 6, 4), (3, 3, 4, 2), (1, 1), (1, 1), "SAME", "float16", ()),
    ((1, 6, 5, 2), (2, 2, 2, 3), (2, 1), (1, 1), "VALID", "bfloat16", ()),
    ((3, 5, 5, 2), (3, 3, 2, 2), (1, 1), (1, 1), "SAME", "float32", ((0, 0), (1, 3))),
    # 1x1 windows: stride 1 copies x as rows (no patches), stride 2 gathers patches
    ((2, 4, 3, 5), (1, 1, 5, 3), (1, 1), (1, 1), "SAME", "float32", ()),
    ((2, 4, 3, 5), (1, 1, 5, 3), (1, 1), (1, 1), "VALID", "float64", ((0, 0), (1, 3))),
    ((2, 5, 5, 3), (1, 1, 3, 4), (2, 2), (1, 1), "SAME", "float32", ()),
    ((1, 4, 4, 3), (1, 1, 3, 2), (1, 1), (1, 1), "SAME", "bfloat16", ()),
    # a `?` channel count in x only (known from the filter), and in both (the named op)
    ((2, 5, 4, 3), (2, 3, 3, 4), (1, 2), (1, 1), "SAME", "float32", ((0, 3),)),
    ((2, 4, 4, 3), (1, 1, 3, 4), (1, 1), (1, 1), "VALID", "float32", ((0, 3),)),
    ((2, 5, 4, 3), (2, 3, 3, 4), (2, 1), (1, 2), "SAME", "float32", ((0, 3), (1, 2))),
    # empty: no output rows, a batch of 0 (static and `?`), no channels
    ((2, 1, 4, 3), (2, 2, 3, 5), (1, 1), (1, 1), "VALID", "float32", ()),
    ((0, 5, 5, 3), (3, 3, 3, 2), (1, 1), (1, 1), "SAME", "float32", ()),
    ((0, 5, 5, 3), (3, 3, 3, 2), (2, 2), (1, 1), "SAME", "float64", ((0, 0),)),
    ((0, 4, 4, 3), (1, 1, 3, 2), (1, 1), (1, 1), "SAME", "float32", ((0, 0), (1, 3))),
    ((2, 4, 4, 0), (3, 3, 0, 2), (1, 1), (1, 1), "SAME", "float32", ()),
])
def test_conv2d_matches_reference(x, f, strides, dilations, padding, dtype, dynamic):
    rng = np.random.default_rng(8)
    arrays = [random_array(rng, x, dtype), random_array(rng, f, dtype)]
    attrs = {"strides": strides, "dilations": dilations, "padding": padding}
    check(N.Conv2DOp, arrays, attrs, dynamic)


@pytest.mark.parametrize("x,f,strides,dilations,padding,dtype,dynamic", [
    ((1, 5, 5, 3), (3, 3, 3, 1), (1, 1), (1, 1), "SAME", "float32", ()),
    ((2, 6, 5, 2), (3, 2, 2, 3), (2, 1), (1, 2), "SAME", "float64", ()),
    ((1, 9, 7, 2), (2, 3, 2, 2), (1, 2), (2, 1), "VALID", "float32", ()),
    ((1, 6, 6, 4), (3, 3, 4, 1), (1, 1), (1, 1), "SAME", "float16", ()),
    ((1, 6, 5, 2), (2, 2, 2, 2), (2, 1), (1, 1), "VALID", "bfloat16", ()),
    ((3, 5, 5, 2), (3, 3, 2, 2), (1, 1), (1, 1), "SAME", "float32", ((0, 0), (1, 3))),
])
def test_depthwise_conv2d_matches_reference(x, f, strides, dilations, padding, dtype, dynamic):
    rng = np.random.default_rng(12)
    arrays = [random_array(rng, x, dtype), random_array(rng, f, dtype)]
    attrs = {"strides": strides, "dilations": dilations, "padding": padding}
    check(N.DepthwiseConv2DOp, arrays, attrs, dynamic)


POOLS = [  # (shape, ksize, strides, padding, dtype, dynamic)
    ((1, 4, 4, 3), (2, 2), (2, 2), "VALID", "float32", ()),
    ((2, 5, 5, 2), (3, 3), (1, 1), "SAME", "float32", ()),
    ((1, 7, 5, 1), (2, 3), (2, 2), "SAME", "float64", ()),
    ((1, 6, 6, 2), (3, 3), (2, 1), "VALID", "float16", ()),
    ((2, 5, 4, 3), (2, 2), (1, 1), "SAME", "int32", ()),
    ((1, 5, 5, 2), (3, 3), (2, 2), "SAME", "uint8", ()),
    ((1, 4, 6, 2), (2, 2), (1, 2), "SAME", "int8", ()),
    ((3, 5, 5, 2), (3, 3), (2, 2), "SAME", "float32", ((0, 0), (0, 3))),
]


@pytest.mark.parametrize("shape,ksize,strides,padding,dtype,dynamic", POOLS)
@pytest.mark.parametrize("spec", [N.MaxPool2DOp, N.AvgPool2DOp], ids=["max", "avg"])
def test_pool_matches_reference(spec, shape, ksize, strides, padding, dtype, dynamic):
    x = random_array(np.random.default_rng(9), shape, dtype)
    check(spec, [x], {"ksize": ksize, "strides": strides, "padding": padding}, dynamic)


def test_avg_pool2d_bfloat16_matches_reference():
    x = random_array(np.random.default_rng(10), (2, 7, 5, 1), "bfloat16")
    check(N.AvgPool2DOp, [x], {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"})


def test_max_pool2d_propagates_nan():
    x = np.arange(16, dtype=np.float32).reshape(1, 4, 4, 1)
    x[0, 1, 1, 0] = np.nan
    check(N.MaxPool2DOp, [x], {"ksize": (2, 2), "strides": (2, 2), "padding": "VALID"})


def test_window_counts_count_unpadded_positions():
    np.testing.assert_array_equal(window_counts(4, 3, 1, 1, 4), [2, 3, 3, 2])
    np.testing.assert_array_equal(window_counts(5, 2, 2, 0, 3), [2, 2, 1])


@pytest.mark.parametrize("shape,axis,dtype,dynamic", [
    ((2, 10), -1, "float32", ()),
    ((4, 3), 0, "float64", ()),
    ((2, 3, 4), 1, "float32", ()),
    ((7,), 0, "float16", ()),
    ((3, 5), -1, "bfloat16", ()),
    ((3, 6), 1, "float32", ((0, 0), (0, 1))),
])
@pytest.mark.parametrize("spec", [N.SoftmaxOp, N.LogSoftmaxOp], ids=["softmax", "log"])
def test_softmax_matches_reference(spec, shape, axis, dtype, dynamic):
    x = random_array(np.random.default_rng(11), shape, dtype) * 10
    check(spec, [x], {"axis": axis}, dynamic)


@pytest.mark.parametrize("spec", [N.SoftmaxOp, N.LogSoftmaxOp], ids=["softmax", "log"])
def test_softmax_is_stable_with_large_and_infinite_inputs(spec):
    x = np.array([[1000.0, 1001.0, -np.inf], [-np.inf, -np.inf, -np.inf],
                  [np.inf, 1.0, 2.0], [np.nan, 0.0, 1.0]], np.float32)
    check(spec, [x], {"axis": -1})


def test_pool_with_dynamic_spatial_dims_is_a_lowering_error():
    x = np.zeros((1, 4, 4, 1), np.float32)
    text = ember_text(N.MaxPool2DOp, [x], {"ksize": (2, 2), "strides": (2, 2)})
    text = text.replace("tensor<1x4x4x1xf32>", "tensor<1x?x4x1xf32>")
    with pytest.raises(PassFailure, match="max_pool2d needs an input of rank 4 with static "
                                          "height and width"):
        lower(text)
