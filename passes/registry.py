"""The pass registry: one line per pass (name -> "module:Class"), plus pipeline aliases.

Classes are imported when first looked up, so listing passes is cheap. A test checks that
names, classes and file names agree.
"""

from __future__ import annotations

import importlib

PASSES: dict[str, str] = {
    "convert-ember-to-linalg": "ember.passes.conversions.ember_to_linalg:ConvertEmberToLinalgPass",
    "ember-canonicalize": "ember.passes.transforms.canonicalize:CanonicalizePass",
    "ember-constant-fold": "ember.passes.transforms.constant_fold:ConstantFoldPass",
    "ember-copies-to-linalg": "ember.passes.transforms.copies_to_linalg:CopiesToLinalgPass",
    "ember-copy-repeated-results":
        "ember.passes.transforms.copy_repeated_results:CopyRepeatedResultsPass",
    "ember-cse": "ember.passes.transforms.cse:CsePass",
    "ember-dce": "ember.passes.transforms.dce:DcePass",
    "ember-div-to-mul": "ember.passes.transforms.div_to_mul:DivToMulPass",
    "ember-outline-loop-nests":
        "ember.passes.transforms.outline_loop_nests:OutlineLoopNestsPass",
    "ember-drop-empty-concat-operands":
        "ember.passes.transforms.drop_empty_concat_operands:DropEmptyConcatOperandsPass",
    "ember-inline": "ember.passes.transforms.inline:InlinePass",
    "ember-licm": "ember.passes.transforms.licm:LicmPass",
    "ember-linalg-to-blas": "ember.passes.transforms.linalg_to_blas:LinalgToBlasPass",
    "ember-optimize": "ember.passes.transforms.optimize:OptimizePass",
    "ember-prepare-blas": "ember.passes.transforms.prepare_blas:PrepareBlasPass",
    "ember-readonly-arguments":
        "ember.passes.transforms.readonly_arguments:ReadonlyArgumentsPass",
    "ember-round-to-bf16": "ember.passes.transforms.round_to_bf16:RoundToBf16Pass",
    "ember-shape-refine": "ember.passes.transforms.shape_refine:ShapeRefinePass",
    "ember-unrank-dynamic-results":
        "ember.passes.transforms.unrank_dynamic_results:UnrankDynamicResultsPass",
    "ember-widen-bool-memrefs": "ember.passes.transforms.widen_bool_memrefs:WidenBoolMemrefsPass",
    "ember-gpu-device-allocs": "ember.passes.transforms.gpu_device_allocs:GpuDeviceAllocsPass",
    "ember-gpu-tile-matmul":
        "ember.passes.transforms.gpu_tile_matmul:GpuTileMatmulPass",
    "ember-gpu-libdevice": "ember.passes.transforms.gpu_libdevice:GpuLibdevicePass",
    "ember-gpu-mma": "ember.passes.transforms.gpu_mma:GpuMmaPass",
    "ember-gpu-mma-emulate": "ember.passes.transforms.gpu_mma_emulate:GpuMmaEmulatePass",
    "ember-gpu-launch-bounds":
        "ember.passes.transforms.gpu_launch_bounds:GpuLaunchBoundsPass",
    "ember-gpu-map": "ember.passes.transforms.gpu_map:GpuMapPass",
    "ember-gpu-map-reductions": "ember.passes.transforms.gpu_map_reductions:GpuMapReductionsPass",
}

# Named pipelines: usable wherever a pass name is (`-p ember-cpu-prepare`).
PIPELINES: dict[str, str] = {
    "ember-simplify": "ember-canonicalize,ember-constant-fold,ember-cse,ember-dce",
    # Shapes refine best after folding has made shape operands constant; refined shapes
    # then enable more folding.
    "ember-cpu-prepare": "ember-inline,ember-optimize,ember-shape-refine,ember-optimize",
}

# Upstream passes users commonly combine with ours; used for "did you mean" suggestions.
UPSTREAM_HINTS = (
    "canonicalize", "cse", "loop-invariant-code-motion", "symbol-dce", "inline", "sccp",
    "one-shot-bufferize", "convert-linalg-to-loops", "convert-scf-to-cf", "convert-to-llvm",
    "lower-affine", "reconcile-unrealized-casts", "func.func",
)


def pass_class(name: str):
    """The Pass subclass registered as `name` (KeyError if none)."""
    if name in _CLASSES:
        return _CLASSES[name]
    module, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)


def names() -> list[str]:
    return sorted(PASSES) + sorted(PIPELINES)


_CLASSES: dict[str, type] = {}  # passes registered at run time (not importable by path)


def register_pass(cls):
    """Registers a user pass class (usable as a decorator); textual pipelines then find it.

    Example:
      >>> import dataclasses
      >>> from typing import ClassVar
      >>> from ember.passes.base import Pass
      >>> @register_pass
      ... @dataclasses.dataclass(frozen=True)
      ... class NothingPass(Pass):
      ...     name: ClassVar[str] = "test-nothing"
      ...     def run(self, module, stats):
      ...         pass
      >>> "test-nothing" in names()
      True
    """
    from ember.passes.base import Pass, check_options
    if not (isinstance(cls, type) and issubclass(cls, Pass)):
        raise TypeError(f"register_pass takes a subclass of ember.passes.base.Pass (a frozen "
                        f"dataclass with `name` and `run`), got {cls!r}")
    name = getattr(cls, "name", "")
    if not name or name != name.lower() or " " in name or "_" in name:
        raise ValueError(f"pass class {cls.__name__} needs a kebab-case `name` "
                         f"('my-pass'), got {name!r}")
    check_options(cls)
    if name in PASSES and PASSES[name] != f"{cls.__module__}:{cls.__qualname__}":
        raise ValueError(f"a pass named {name!r} is already registered ({PASSES[name]})")
    if not cls.__module__.startswith("ember.") and name not in PASSES:
        from ember.passes.pipeline_syntax import is_upstream_pass  # (MLIR: not for Ember's)
        if is_upstream_pass(name):  # it would hide MLIR's in every pipeline, silently
            raise ValueError(f"a pass named {name!r} is MLIR's; give {cls.__name__} another "
                             f"name (e.g. 'my-{name}')")
    PASSES[name] = f"{cls.__module__}:{cls.__qualname__}"
    _CLASSES[name] = cls
    return cls


ENTRY_POINT_GROUP = "ember.passes"
_ENTRY_POINTS: dict | None = None  # name -> entry point, read on first need


def from_entry_point(name: str) -> bool:
    """Registers pass `name` from the installed `ember.passes` entry point of that name
    (`my-pass = "pkg.module:MyPass"`); False when there is none. Pipelines call this for a
    name they do not know, so installed passes load only when used."""
    global _ENTRY_POINTS
    if _ENTRY_POINTS is None:
        import importlib.metadata
        _ENTRY_POINTS = {e.name: e for e in
                         importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}
    entry = _ENTRY_POINTS.get(name)
    if entry is None:
        return False
    if name not in _CLASSES:
        cls = entry.load()
        if getattr(cls, "name", None) != name:
            raise ValueError(f"entry point {name} = {entry.value!r} ({ENTRY_POINT_GROUP}) "
                             f"gives {cls!r}, not a pass class named {name!r}")
        if name not in _CLASSES:
            register_pass(cls)
    return True
