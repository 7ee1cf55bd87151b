"""The pass registry: one line per pass (name -> "module:Class"), plus pipeline aliases.

Classes are imported when first looked up, so listing passes is cheap. A test checks that
names, classes and file names agree.
"""

from __future__ import annotations

import importlib

PASSES: dict[str, str] = {
    "ember-canonicalize": "ember.passes.transforms.canonicalize:CanonicalizePass",
    "ember-constant-fold": "ember.passes.transforms.constant_fold:ConstantFoldPass",
    "ember-cse": "ember.passes.transforms.cse:CsePass",
    "ember-dce": "ember.passes.transforms.dce:DcePass",
    "ember-inline": "ember.passes.transforms.inline:InlinePass",
    "ember-licm": "ember.passes.transforms.licm:LicmPass",
    "ember-optimize": "ember.passes.transforms.optimize:OptimizePass",
    "ember-shape-refine": "ember.passes.transforms.shape_refine:ShapeRefinePass",
}

# Upstream passes users commonly combine with ours; used for "did you mean" suggestions.
UPSTREAM_HINTS = (
    "canonicalize", "cse", "loop-invariant-code-motion", "symbol-dce", "inline", "sccp",
    "one-shot-bufferize", "convert-linalg-to-loops", "convert-scf-to-cf", "convert-to-llvm",
    "lower-affine", "reconcile-unrealized-casts", "func.func",
)


def pass_class(name: str):
    """The Pass subclass registered as `name` (KeyError if none)."""
    module, cls = PASSES[name].split(":")
    return getattr(importlib.import_module(module), cls)


def names() -> list[str]:
    return sorted(PASSES)
