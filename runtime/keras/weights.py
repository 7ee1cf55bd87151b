"""`get_weights` / `set_weights` of an em.keras model (and `summary`, `get_layer`): one
array per *logical* weight, as Keras. A `ShardedVariable` (ParameterServerStrategy with a
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


def model_layers(model) -> list:
    """A Sequential's `layers`; a subclassed model's sublayers in the order they were set
    (keras.Model.layers)."""
    layers = getattr(model, "layers", None)
    if layers is None:
        layers = [m for m in vars(model).values() if isinstance(m, Layer)]
    return list(layers)


def summary(model, print_fn=print) -> None:
    """Model.summary: each layer with its output shape (a Sequential's, as Keras's; a
    subclassed model's layers "multiple", as Keras's) and number of parameters, and the
    totals."""
    if not model.built and not model.variables:
        raise ValueError(f"Model '{model.name}': this model has not yet been built. Build "
                         "the model first by calling `build()` or by calling the model "
                         "on a batch of data.")
    layers = model_layers(model)
    shapes = model.output_shapes() if hasattr(model, "output_shapes") else \
        ["multiple"] * len(layers)
    rows = [(f"{getattr(l, 'name', '?')} ({type(l).__name__})", shape,
             sum(int(np.prod(v.shape)) for v in getattr(l, "variables", ())))
            for l, shape in zip(layers, shapes)]
    width = max([len(r[0]) for r in rows] + [20]) + 2
    swidth = max([len(r[1]) for r in rows] + [12]) + 2
    total_width = width + swidth + 12
    line = "_" * total_width
    out = [f'Model: "{model.name}"', line,
           f"{'Layer (type)':<{width}}{'Output Shape':<{swidth}}{'Param #':>12}",
           "=" * total_width]
    out += [f"{name:<{width}}{shape:<{swidth}}{count:>12,}" for name, shape, count in rows]
    trainable = sum(int(np.prod(v.shape)) for v in model.trainable_variables)
    total = sum(int(np.prod(v.shape)) for v in model.variables)
    out += ["=" * total_width, f"Total params: {total:,}",
            f"Trainable params: {trainable:,}",
            f"Non-trainable params: {total - trainable:,}", line]
    for text in out:
        print_fn(text)


def get_layer(model, name=None, index=None):
    """keras.Model.get_layer: the layer at `index` of `model.layers`, or the one called
    `name` (Keras 2's ValueErrors for both, neither, a bad index or an unknown name)."""
    layers = model_layers(model)
    if index is not None and name is not None:
        raise ValueError("Provide only a layer name or a layer index. Received: "
                         f"index={index}, name={name}.")
    if index is not None:
        if len(layers) <= index:
            raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                             f"has {len(layers)} layers.")
        return layers[index]
    if name is not None:
        for layer in layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in layers]}.")
    raise ValueError("Provide either a layer name or layer index at `get_layer`.")


class WeightsAPI:
    """get_weights / set_weights / summary (a mixin of em.keras.Model and Sequential)."""

    def get_weights(self) -> list:
        """One numpy array per weight (a ShardedVariable's shards concatenated)."""
        return get_weights(self)

    def set_weights(self, weights) -> None:
        """Assigns `weights`, in get_weights's order and shapes."""
        set_weights(self, weights)

    def summary(self, print_fn=print) -> None:
        """Prints each layer with its output shape and number of parameters, and the
        totals (Keras's ValueError when the model is not built yet: its weights do not
        exist)."""
        summary(self, print_fn)

    def get_layer(self, name=None, index=None):
        """The layer named `name`, or at `index` of `layers` (keras.Model.get_layer).

        Raises:
          ValueError: both or neither given, an index past the end, or an unknown name.
        """
        return get_layer(self, name, index)
