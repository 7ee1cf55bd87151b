"""How `em.print` (and the `ember.print` op) formats values: as tf.print does.

Each rule cites its source: the printed outputs in /work/shared/guides, tf.print's API docs
("[0 1 2 ... 7 8 9]"), or TensorFlow's `Tensor::SummarizeValue` (tensor.cc; floats through
`FloatToBuffer`/`DoubleToBuffer` in strings/numbers.cc).
"""

import io
import sys

import numpy as np
import pytest

import ember as em

GUIDE_ROW = "[0.682211161 0.396621943 0.451262951 0.643357158 0.87304759]"


def printed(value) -> str:
    stream = io.StringIO()
    em.print(value, output_stream=stream, end="")
    return stream.getvalue()


@pytest.mark.parametrize("value,text", [
    # Floats: `%.6g` (no numpy `2.` padding), `%.9g` when 6 digits do not read back: the
    # while-loop output in tf-function-guide.zh.txt and the losses in tf-wiki-graph-execution.
    (em.constant([1.5, 2.0]), "[1.5 2]"),
    (em.constant(2.0), "2"),
    (em.constant(0.1), "0.1"),
    (em.constant(np.array(GUIDE_ROW[1:-1].split(), np.float32)), GUIDE_ROW),
    (em.constant(np.array(["0.592955", "0.37705484"], np.float32)), "[0.592955 0.37705484]"),
    (em.constant(np.float32("2.14193726")), "2.14193726"),
    (em.constant([1e20, 1e-5, float("nan"), float("-inf")]), "[1e+20 1e-05 nan -inf]"),
    # float64: `%.15g`, else `%.17g` (DoubleToBuffer); float16/bfloat16 print as float32.
    (em.constant([0.1, 1 / 3], dtype=em.float64), "[0.1 0.33333333333333331]"),
    (em.constant([1.5, 0.1], dtype=em.float16), "[1.5 0.0999755859]"),
    (em.constant([1.5, 0.1], dtype=em.bfloat16), "[1.5 0.100097656]"),
    # Integers without padding to a common width (docs: "[0 2 4 ... 14 16 18]").
    (em.constant([1, 10, -100]), "[1 10 -100]"),
    (em.constant([255, 0], dtype=em.uint8), "[255 0]"),
    # Bools as 1/0 (SummarizeValue's DT_BOOL case: 'This will emit "1 0..."').
    (em.constant([True, False]), "[1 0]"),
    (em.constant(True), "1"),
    # Strings: a scalar prints raw; array elements quoted, as current tf.print does.
    (em.constant(["a", "é"]), '["a" "é"]'),
    (em.constant("hi"), "hi"),
    (em.constant([b"\xff"]), '["\ufffd"]'),
    # Empty tensors print [] (tensorflow/tensorflow#28289: tf.ones([0, 5, 256]) -> "[]").
    (em.zeros([0]), "[]"),
    (em.zeros([0, 5, 2]), "[]"),
])
def test_element_formats(value, text):
    assert printed(value) == text


@pytest.mark.parametrize("value,text", [
    # Each dim longer than 6 shows its first and last 3 entries (docs: tf.range(10)).
    (em.range(10), "[0 1 2 ... 7 8 9]"),
    (em.range(10) * 2, "[0 2 4 ... 14 16 18]"),
    (em.range(7), "[0 1 2 ... 4 5 6]"),
    (em.range(6), "[0 1 2 3 4 5]"),
    (em.range(5000), "[0 1 2 ... 4997 4998 4999]"),
    # Rows on new lines, indented by depth; a blank line between the blocks of a 3-D tensor.
    (em.constant([[1, 2], [3, 4]]), "[[1 2]\n [3 4]]"),
    (em.reshape(em.range(8), [2, 2, 2]), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]"),
    (em.reshape(em.range(16), [8, 2]),
     "[[0 1]\n [2 3]\n [4 5]\n ...\n [10 11]\n [12 13]\n [14 15]]"),
    (em.reshape(em.range(14), [2, 7]), "[[0 1 2 ... 4 5 6]\n [7 8 9 ... 11 12 13]]"),
])
def test_long_dims_are_summarised(value, text):
    assert printed(value) == text


@pytest.mark.parametrize("value,text", [
    (np.array(GUIDE_ROW[1:-1].split(), np.float32), GUIDE_ROW),
    (np.arange(10, dtype=np.int32), "[0 1 2 ... 7 8 9]"),
    (np.array([True, False]), "[1 0]"),
    (np.array(["a", "b"], object), '["a" "b"]'),
])
def test_traced_print_formats_like_eager(value, text, capsys):
    @em.function
    def show(x):
        em.print("x:", x, output_stream=sys.stderr)
        return x

    if value.dtype == object:  # strings print on the host: one warning names the op
        with pytest.warns(em.runtime.executor.InterpreterFallbackWarning,
                          match="'ember.print' .* works on string tensors"):
            show(em.constant(value))
    else:
        show(em.constant(value))
    assert capsys.readouterr().err == f"x: {text}\n"
    assert '"ember.print"' in show.get_concrete_function(em.constant(value)).mlir()
    assert printed(em.constant(value)) == text


SUMMARIZED = [
    # tf.print's `summarize`: first and last n entries of every longer dim; -1: all of them.
    (None, em.range(10), "[0 1 2 ... 7 8 9]"),
    (-1, em.range(10), "[0 1 2 3 4 5 6 7 8 9]"),
    (2, em.range(10), "[0 1 ... 8 9]"),
    (0, em.range(10), "[...]"),
    (5, em.range(10), "[0 1 2 3 4 5 6 7 8 9]"),
    (1, em.reshape(em.range(20), [4, 5]), "[[0 ... 4]\n ...\n [15 ... 19]]"),
    (-1, em.reshape(em.range(16), [2, 8]),
     "[[0 1 2 3 4 5 6 7]\n [8 9 10 11 12 13 14 15]]"),
]


@pytest.mark.parametrize("summarize,value,text", SUMMARIZED)
def test_summarize_eagerly_and_compiled(summarize, value, text, capsys):
    stream = io.StringIO()
    em.print(value, output_stream=stream, summarize=summarize, end="")
    assert stream.getvalue() == text

    @em.function
    def show(x):  # to stdout: an ember.print op, compiled (prints never run on tier 0)
        em.print("v:", x, output_stream=sys.stdout, summarize=summarize)
        return x
    capsys.readouterr()
    show(value)
    assert capsys.readouterr().out == f"v: {text}\n"
    traced = show.get_concrete_function(value).mlir()
    assert f"summarize = {3 if summarize is None else summarize} : i64" in traced


@pytest.mark.parametrize("summarize,error", [(-2, ValueError), (1.5, TypeError),
                                             (True, TypeError), ("all", TypeError)])
def test_summarize_must_be_an_int_from_minus_one(summarize, error):
    with pytest.raises(error, match="em.print: summarize must be"):
        em.print(em.range(3), summarize=summarize)
