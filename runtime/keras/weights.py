"""`get_weights` / `set_weights` of an em.keras model (and `summary`): one array per
*logical* weight, as Keras. A `ShardedVariable` (ParameterServerStrategy with a
`variable_partitioner`) is one weight, read as its shards concatenated and written back
split into them; `variables` still lists the shards (what optimizers and tapes work on)."""

from __future__ import annotations

import numpy as np

from ember.frontend.training.layers_core import Layer
from ember.frontend.training.module import Module


def _sharded_of(model) -> dict:
    """{id(shard): its ShardedVariable} over the model and its submodules."""
    out = {}

    def visit(value):
        shards = getattr(value, "_ember_shards", None)
        if shards is not None:
            for shard in shards:
                out[id(shard)] = value
        elif isinstance(value, dict):
            for v in value.values():
                visit(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v)

    for module in (model,) + tuple(model.submodules):
        if isinstance(module, Module):
            for key, value in vars(module).items():
                if key not in module._ignored_attributes:
                    visit(value)
    return out


def logical_weights(model) -> list:
    """The model's weights in `variables` order, each ShardedVariable once (at its first
    shard) instead of its shards."""
    sharded = _sharded_of(model)
    out, seen = [], set()
    for v in model.variables:
        w = sharded.get(id(v), v)
        if id(w) not in seen:
            seen.add(id(w))
            out.append(w)
    return out


def get_weights(model) -> list:
    return [np.array(w.numpy()) for w in logical_weights(model)]


def set_weights(model, weights) -> None:
    where = f"{type(model).__name__}.set_weights"
    variables = logical_weights(model)
    weights = list(weights)
    if len(weights) != len(variables):
        raise ValueError(f"{where}: the model has {len(variables)} weights, got "
                         f"{len(weights)} arrays")
    for v, w in zip(variables, weights):
        w = np.asarray(w)
        if list(w.shape) != list(v.shape):
            raise ValueError(f"{where}: {v.name} has shape {list(v.shape)}, got an array of "
                             f"shape {list(w.shape)}")
    for v, w in zip(variables, weights):
        v.assign(np.asarray(w, v.dtype.np_dtype))


def summary(model, print_fn=print) -> None:
    """Model.summary: each layer with its number of parameters, and the totals."""
    if not model.built and not model.variables:
        raise ValueError(f"Model '{model.name}': this model has not yet been built. Build "
                         "the model first by calling `build()` or by calling the model "
                         "on a batch of data.")
    layers = getattr(model, "layers", None)
    if layers is None:
        layers = [m for m in vars(model).values() if isinstance(m, Layer)]
    rows = [(f"{getattr(l, 'name', '?')} ({type(l).__name__})",
             sum(int(np.prod(v.shape)) for v in getattr(l, "variables", ())))
            for l in layers]
    width = max([len(r[0]) for r in rows] + [20]) + 2
    line = "_" * (width + 12)
    out = [f'Model: "{model.name}"', line, f"{'Layer (type)':<{width}}{'Param #':>12}",
           "=" * (width + 12)]
    out += [f"{name:<{width}}{count:>12,}" for name, count in rows]
    trainable = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    total = sum(int(np.prod(v.shape)) for v in model.variables)
    out += ["=" * (width + 12), f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}", line]
    for text in out:
        print_fn(text)
