"""The pass registry agrees with the code: names, classes, file names, docstrings, aliases.

STYLE.md: one registry line per pass, `"ember-licm": "ember.passes.transforms.licm:LicmPass"`;
a pass is a frozen dataclass with a kebab-case `name`, one per file named after it, whose
module docstring gives a numbered algorithm and before/after IR.
"""

import dataclasses
import doctest
import importlib
import pathlib
import re
import subprocess
import sys
from typing import ClassVar

import pytest

from ember.passes import registry
from ember.passes.base import Pass
from ember.passes.pipeline import Pipeline, PipelineError, make_pass, run_pipeline

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Ember's own passes (test modules may register passes of their own while collected)
ENTRIES = sorted((n, p) for n, p in registry.PASSES.items() if p.startswith("ember."))
ALIASES = sorted(getattr(registry, "PIPELINES", {}).items())


@pytest.mark.parametrize("name,target", ENTRIES, ids=[n for n, _ in ENTRIES])
def test_registry_entry_imports_a_pass_named_like_its_key(name, target):
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    assert registry.pass_class(name) is cls
    assert issubclass(cls, Pass) and dataclasses.is_dataclass(cls)
    assert cls.__dataclass_params__.frozen, f"{class_name} must be a frozen dataclass"
    assert cls.name == name
    assert re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", name), f"{name} is not kebab-case"


def _expected_module(name: str) -> str:
    """ember-constant-fold -> transforms.constant_fold; convert-a-to-b -> conversions.a_to_b."""
    if name.startswith("convert-"):
        return "ember.passes.conversions." + name.removeprefix("convert-").replace("-", "_")
    return "ember.passes.transforms." + name.removeprefix("ember-").replace("-", "_")


@pytest.mark.parametrize("name,target", ENTRIES, ids=[n for n, _ in ENTRIES])
def test_registry_module_file_is_named_after_the_pass(name, target):
    module_name, _ = target.split(":")
    assert module_name == _expected_module(name)
    path = pathlib.Path(importlib.import_module(module_name).__file__)
    stem = module_name.rsplit(".", 1)[1]
    assert path.name == f"{stem}.py" or (path.name == "__init__.py" and path.parent.name == stem)


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_pass_docstring_has_numbered_algorithm_and_before_after(name):
    doc = importlib.import_module(registry.pass_class(name).__module__).__doc__ or ""
    assert doc.startswith(f"{name}:"), f"{name}: the module docstring starts with the pass name"
    assert "Algorithm:" in doc, f"{name}: no 'Algorithm:' section"
    algorithm = doc.split("Algorithm:", 1)[1]
    assert re.search(r"^\s+1\. ", algorithm, re.M) and re.search(r"^\s+2\. ", algorithm, re.M), \
        f"{name}: the algorithm is not a numbered list"
    assert re.search(r"^Before:$", doc, re.M) and re.search(r"^After:$", doc, re.M), \
        f"{name}: no 'Before:'/'After:' IR"
    assert doc.index("Before:") < doc.index("After:")


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_pass_module_fits_the_line_budget(name):
    path = pathlib.Path(importlib.import_module(registry.pass_class(name).__module__).__file__)
    lines = path.read_text().splitlines()
    assert len(lines) <= 250, f"{path.name} has {len(lines)} lines (a pass module is <= 250)"
    assert max(len(line) for line in lines) <= 100


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_pass_module_doctests_pass(name):
    module = importlib.import_module(registry.pass_class(name).__module__)
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    assert doctest.testmod(module, optionflags=flags).failed == 0


@pytest.mark.parametrize("name", [n for n, _ in ENTRIES])
def test_pass_spelling_round_trips_through_the_parser(name):
    default = make_pass(name)
    assert str(Pipeline.parse(name)) == f"builtin.module({default.spelling()})"
    for option, field in type(default).options().items():
        if field.type in ("int", int):
            changed = make_pass(name, f"{option}={field.default + 1}")
            assert str(Pipeline.parse(changed.spelling())) == \
                f"builtin.module({changed.spelling()})"


def test_registry_defines_pipeline_aliases():
    assert ALIASES, "the registry must define named pipelines (PIPELINES)"


@pytest.mark.parametrize("alias,text", ALIASES)
def test_pipeline_alias_parses_and_expands(alias, text):
    assert alias not in registry.PASSES, f"alias {alias} shadows a pass"
    assert str(Pipeline.parse(alias)) == str(Pipeline.parse(text))


@pytest.mark.parametrize("text", [
    "ember-optimize",
    "builtin.module(ember-inline,ember-shape-refine,ember-optimize)",
    "builtin.module(ember-canonicalize,ember-constant-fold,ember-cse,ember-licm,ember-dce)",
    "builtin.module(ember-inline{max-ops=8},canonicalize,ember-optimize{max-iterations=2})",
])
def test_documented_pipelines_parse(text):
    assert Pipeline.parse(text).steps


@pytest.mark.parametrize("text", [
    "builtin.module(func.func(ember-canonicalize,ember-cse),canonicalize)",
    "builtin.module(ember-inline,func.func(ember-optimize,cse),func.func(cse))",
    "builtin.module(func.func(cse,ember-dce{max-iterations=2}),ember-shape-refine)",
])
def test_nested_pipelines_round_trip(text):
    assert str(Pipeline.parse(text)) == text
    assert str(Pipeline.parse(str(Pipeline.parse(text)))) == text


def test_every_pass_says_whether_it_may_nest_under_func_func():
    """A pass that adds or reads other functions (inlining, the lowering that declares
    helpers) must run on the whole module; the per-function ones may nest."""
    per_function = {n for n in registry.PASSES if registry.pass_class(n).per_function}
    assert {"ember-canonicalize", "ember-cse", "ember-dce", "ember-licm"} <= per_function
    assert not {"ember-inline", "convert-ember-to-linalg"} & per_function


def test_optimize_steps_are_registered_passes():
    from ember.passes.transforms.optimize import STEPS
    assert all(step in registry.PASSES for step in STEPS)


def test_misspelt_pass_suggests_the_registered_one():
    with pytest.raises(PipelineError, match="did you mean 'ember-licm'"):
        Pipeline.parse("ember-lcim")


def test_register_pass_makes_a_user_pass_usable_in_pipelines(context):
    from mlir import ir

    @dataclasses.dataclass(frozen=True)
    class CountOpsPass(Pass):
        name: ClassVar[str] = "test-count-ops"

        def run(self, module, stats):
            stats.add("seen", sum(1 for _ in module.body.operations))

    try:
        assert registry.register_pass(CountOpsPass) is CountOpsPass
        module = ir.Module.parse("func.func @f() {\n  return\n}")
        report = run_pipeline(module, "builtin.module(ember-dce,test-count-ops)")
        assert report.statistics[-1].as_dict() == {"seen": 1}
    finally:
        registry.PASSES.pop("test-count-ops", None)
        registry._CLASSES.pop("test-count-ops", None)


def test_custom_pass_example_runs():
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "custom_pass.py")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert '"ember.mul"(%arg0, %arg0)' in done.stdout
    assert "ember.square" not in done.stdout.split("After ", 1)[1]
    assert "square-to-mul: 2" in done.stdout
