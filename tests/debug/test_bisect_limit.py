"""The opt-bisect gate (passes/bisect_limit.py) as pipelines and pattern drivers use it."""

import io

import pytest
from mlir import ir

from ember.dialects.ember.irdl import make_context
from ember.dialects.ember.parsing import parse_module
from ember.passes import bisect_limit
from ember.passes.pipeline import run_pipeline

SOURCE = """func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "ember.add"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "ember.mul"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}"""


def test_outside_a_limit_everything_runs_silently():
    assert not bisect_limit.active()
    assert bisect_limit.should_run("anything") and bisect_limit.applications() == 0


@pytest.mark.parametrize("limit, ran", [(0, []), (2, [1, 2]), (-1, [1, 2, 3])])
def test_only_the_first_n_applications_run(limit, ran):
    out = io.StringIO()
    with bisect_limit.limited(limit, out):
        decisions = [bisect_limit.should_run(f"pattern p{i} on ember.add") for i in (1, 2, 3)]
        assert bisect_limit.applications() == 3
    assert [i + 1 for i, d in enumerate(decisions) if d] == ran
    assert out.getvalue().splitlines()[0] == (
        f"BISECT: {'running' if 1 in ran else 'NOT running'} pass (1) pattern p1 on ember.add")


def test_limits_nest_and_end_with_their_block():
    with bisect_limit.limited(1, io.StringIO()):
        with bisect_limit.limited(0, io.StringIO()):
            assert not bisect_limit.should_run("inner")
        assert bisect_limit.should_run("outer")
    assert not bisect_limit.active()


def test_the_limit_must_be_an_int():
    with pytest.raises(TypeError, match="must be an int"):
        with bisect_limit.limited("3"):
            pass


@pytest.mark.parametrize("limit, adds", [(2, 2), (3, 1)])
def test_a_pipeline_stops_applying_passes_at_the_limit(limit, adds):
    out = io.StringIO()
    with make_context(), ir.Location.unknown():
        module = parse_module(SOURCE)
        with bisect_limit.limited(limit, out):
            run_pipeline(module, "ember-canonicalize,cse,func.func(ember-cse),canonicalize")
        assert str(module).count('"ember.add"') == adds
    assert out.getvalue().splitlines()[2].endswith("pass (3) ember-cse on func.func (@f)")
