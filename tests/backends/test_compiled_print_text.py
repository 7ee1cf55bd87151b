"""em.print of text known at trace time (Python values, strings, literal `{}`) compiles:
the text goes into the print ops' format/end, no string tensor is made, and the output is
exactly eager em.print's, on every call, in order with the prints of tensors."""

import sys
import warnings

import numpy as np
import pytest

import ember as em

CASES = [
    ("text", 1),                                   # only Python values
    (),                                            # nothing: just `end`
    ("{}",),                                       # literal braces alone
    ("a {} b", em.constant(2)),                    # literal braces before a tensor
    ("x", em.constant([1.5, 2.0]), "tail {}", 3.25, None),  # text after the last tensor
    (em.constant(1), "{}", em.constant([True, False]), "{} {}"),
    (np.float32(0.5), [1, 2], "é"),                # Python objects print as str()
]


def _compiled(fn, *args) -> bool:
    concrete = fn.get_concrete_function(*args)
    return concrete._executor.fallback_reason is None and \
        bool(concrete._executor.compiled_shapes)


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
@pytest.mark.parametrize("inputs", CASES, ids=range(len(CASES)))
def test_print_of_known_text_compiles_and_matches_eager(inputs, stream, capsys):
    def body(x):
        em.print(*inputs, output_stream=getattr(sys, stream), sep="|", end="<\n")
        em.print("then", x)
        return x + 1

    body(em.constant(1))
    expected = capsys.readouterr()
    f = em.function(body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no InterpreterFallbackWarning
        f(em.constant(1))
        f(em.constant(1))
    got = capsys.readouterr()
    assert _compiled(f, em.constant(1))
    assert (got.out, got.err) == (expected.out * 2, expected.err * 2)


def test_text_only_print_op_verifies_and_interprets(capsys):
    from ember.dialects.ember.state import PrintOp
    assert PrintOp.reference(np.int32(7), format="just text", end="!\n",
                             stream="stdout", summarize=3) == "just text!\n"
    f = em.function(lambda x: (em.print("only text"), x)[1], jit_compile=False)
    f(em.constant(3))
    assert capsys.readouterr().err == "only text\n"
