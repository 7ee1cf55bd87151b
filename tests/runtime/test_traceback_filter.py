"""Errors raised through em.function calls show the user's frames, not Ember's (as TF's and
JAX's tracebacks), unless filtering is turned off (runtime/traceback_filter.py)."""

import os
import subprocess
import sys
import textwrap
import traceback

import pytest

import ember as em


@pytest.fixture
def filtering():
    em.debugging.enable_traceback_filtering()
    yield
    em.debugging.disable_traceback_filtering()  # as the suite runs (tests/conftest.py)


def _frames(error: BaseException) -> list:
    return [(f.filename, f.name) for f in traceback.extract_tb(error.__traceback__)]


def _ember_frames(frames: list) -> list:
    root = os.path.dirname(em.__path__[0]) + os.sep  # the checkout: ember/, runtime/, ...
    return [f for f in frames if f[0].startswith(root)
            and not f[0].startswith(os.path.join(root, "tests", ""))]


def helper(a, b):
    return em.matmul(a, b)


def test_a_trace_error_shows_the_users_lines_and_one_frame_of_embers(filtering):
    @em.function
    def g(x):
        y = x * 2
        if em.reduce_sum(y) > 0:
            y = helper(y, em.ones([5, 5]))
        return y

    with pytest.raises(em.OpShapeError) as info:
        g(em.ones([2, 3]))
    frames = _frames(info.value)
    names = [name for filename, name in frames if filename == __file__]
    assert names[0] == "test_a_trace_error_shows_the_users_lines_and_one_frame_of_embers"
    assert names[-2:] == ["if_body", "helper"] and "g" in names
    assert [name for _, name in _ember_frames(frames)] == ["__call__"]  # the re-raise
    assert not any("numpy" in filename or "mlir" in filename for filename, _ in frames)


@pytest.mark.parametrize("via", ["function", "concrete"])
def test_a_compiled_call_error_shows_the_call_only(filtering, via):
    @em.function
    def f(x):
        em.debugging.assert_positive(x, message="x must be positive")
        return x * 2

    callee = f if via == "function" else f.get_concrete_function(em.constant([1.0]))
    callee(em.constant([1.0]))
    with pytest.raises(em.errors.InvalidArgumentError, match="x must be positive") as info:
        callee(em.constant([-1.0]))
    assert [name for _, name in _ember_frames(_frames(info.value))] == ["__call__"]
    assert _frames(info.value)[0][0] == __file__


def test_a_users_exception_keeps_its_frames_and_its_cause(filtering):
    def fail(x):
        try:
            {}["missing"]
        except KeyError as e:
            raise ValueError("the user's own error") from e

    f = em.function(lambda x: fail(x))
    with pytest.raises(ValueError, match="the user's own error") as info:
        f(em.constant(1.0))
    assert [name for filename, name in _frames(info.value) if filename == __file__][-1] \
        == "fail"
    assert isinstance(info.value.__cause__, KeyError)


def test_turned_off_every_frame_is_shown():
    assert not em.debugging.is_traceback_filtering_enabled()  # the suite's setting

    @em.function
    def f(x):
        return em.matmul(x, x)

    with pytest.raises(em.OpShapeError) as info:
        f(em.ones([2, 3]))
    assert len(_ember_frames(_frames(info.value))) > 5


def test_the_environment_variable_turns_it_off_for_a_process(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent("""
        import ember as em
        assert em.debugging.is_traceback_filtering_enabled() == (MODE != "off")
        @em.function
        def f(x):
            return em.matmul(x, x)
        f(em.ones([2, 3]))
    """))
    counts = {}
    for mode in ("on", "off"):
        source = script.read_text().replace("MODE", repr(mode))
        run = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                             env={**os.environ,
                                  "EMBER_TRACEBACK_FILTERING": mode})
        assert "OpShapeError" in run.stderr, run.stderr
        counts[mode] = run.stderr.count('  File "')
    assert counts["on"] == 3 and counts["off"] > 8, counts  # <string>, __call__, f


def test_an_error_tier_0_hands_to_compiled_code_is_not_chained_to_its_own(monkeypatch):
    monkeypatch.setenv("EMBER_TIER0", "on")  # the first calls run on the interpreter

    @em.function(input_signature=[em.TensorSpec([None, None], em.float32)] * 2)
    def mm(a, b):
        return em.matmul(a, b) * 2.0

    mm(em.ones([2, 3]), em.ones([3, 2]))
    assert mm.get_concrete_function()._executor.tiers() == {
        (((2, 3), "<f4"), ((3, 2), "<f4")): "interp"}
    with pytest.raises(em.OpShapeError, match="contraction dims differ") as info:
        mm(em.ones([2, 3]), em.ones([4, 2]))  # tier 0 fails: compiled code raises its error
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_a_bad_pipeline_at_em_function_names_the_users_line_and_how_to_register(filtering):
    with pytest.raises(em.errors.PipelineError, match=r"unknown pass 'my-mul-one' .* import "
                                                      r"the module that registers it") as info:
        em.function(lambda x: x, pipeline="builtin.module(my-mul-one)")
    frames = _frames(info.value)
    assert frames[0][0] == __file__
    assert [name for _, name in _ember_frames(frames)] == ["function", "decorate"]
