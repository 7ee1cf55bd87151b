"""`em.Module`: a container of Variables and other Modules, found by walking its attributes
(tf.Module).

A Module's `variables` / `trainable_variables` / `submodules` are never registered by hand:
they are whatever its attributes hold, directly or inside lists, tuples and dicts, walked as
tf.Module walks them: attributes in sorted name order, dict entries in sorted key order, a
Module's own leaves before those of its submodules, and each object once.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator

from ember.frontend.variables import Variable

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def camel_to_snake(name: str) -> str:
    """`MyDense2D` -> `my_dense2_d`, as tf.Module names an unnamed module."""
    return re.sub(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))", r"_\1", name).lower()


def _children(value):
    """(path element, child) pairs of a list, tuple or dict (dicts in sorted key order)."""
    if isinstance(value, dict):
        try:
            keys = sorted(value)
        except TypeError:
            keys = sorted(value, key=repr)
        return [(k, value[k]) for k in keys]
    if isinstance(value, (list, tuple)):
        return list(enumerate(value))
    shards = getattr(value, "_ember_shards", None)  # em.distribute's ShardedVariable
    if shards is not None:
        return list(enumerate(shards))
    return None


def _leaves(value, path: tuple) -> Iterator[tuple]:
    children = _children(value)
    if children is None:
        yield path, value
        return
    for key, child in children:
        yield from _leaves(child, path + (key,))


class Module:
    """A named container of Variables and submodules (tf.Module).

    Args:
      name: the module's name; defaults to the class name in snake case (`Dense` ->
        `dense`). Must start with a letter or `_`.

    Example:
      >>> import ember as em
      >>> class Linear(em.Module):
      ...     def __init__(self):
      ...         super().__init__()
      ...         self.w = em.Variable([[1.0, 2.0]], name="w")
      ...         self.b = em.Variable(0.0, name="b", trainable=False)
      >>> m = Linear()
      >>> m.name, [v.name for v in m.variables], [v.name for v in m.trainable_variables]
      ('linear', ['b:0', 'w:0'], ['w:0'])
    """

    # attributes that are bookkeeping, not state (as tf.Module's _TF_MODULE_IGNORED_PROPERTIES)
    _ignored_attributes = frozenset({"_name"})

    def __init__(self, name: str | None = None):
        if name is None:
            name = camel_to_snake(type(self).__name__)
        if not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"{type(self).__name__}: name {name!r} is not a valid module "
                             "name: use letters, digits, '_', '.', '-' or '/', starting with "
                             "a letter or '_'")
        self._name = name

    @property
    def name(self) -> str:
        """The name given to the constructor (or derived from the class name)."""
        return self._module_name()

    def _module_name(self) -> str:
        try:
            return self._name
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__}.__init__ did not call super().__init__(): call it "
                "before using the module") from None

    @property
    def variables(self) -> tuple:
        """Every Variable of this module and its submodules, each once, in walk order."""
        return tuple(self._flatten(lambda v: isinstance(v, Variable)))

    @property
    def trainable_variables(self) -> tuple:
        """The Variables created with `trainable=True`, in walk order."""
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and v.trainable))

    @property
    def non_trainable_variables(self) -> tuple:
        """The Variables created with `trainable=False`, in walk order."""
        return tuple(self._flatten(lambda v: isinstance(v, Variable) and not v.trainable))

    @property
    def submodules(self) -> tuple:
        """Every Module reachable from this one (not itself), each once, in walk order."""
        return tuple(self._flatten(lambda v: isinstance(v, Module)))

    def _walk_order(self) -> list:
        """The attribute names in the order the walk visits them (tf.Module: sorted)."""
        return sorted(vars(self))

    def _flatten(self, predicate: Callable, with_path: bool = False) -> Iterator:
        """What tf.Module._flatten yields: the leaves satisfying `predicate`, as
        (path tuple, leaf) pairs with `with_path`."""
        yield from _flatten_module(self, predicate, with_path, (), {id(self)}, [])

    def __repr__(self) -> str:
        return f"<{type(self).__module__}.{type(self).__name__} '{self._module_name()}'>"


def _flatten_module(module: Module, predicate, with_path: bool, prefix: tuple, seen: set,
                    stack: list) -> Iterator:
    """tf.Module's walk: this module's attributes first, then each submodule recursively.
    Without paths every object is yielded once; with paths an object reachable by two paths
    is yielded under both (as tf.Module's `_flatten(with_path=True)`), but a module that
    contains itself is walked once."""
    recursive = id(module) not in stack
    submodules = []
    for key in module._walk_order():
        if key in module._ignored_attributes:
            continue
        for path, leaf in _leaves(vars(module)[key], (key,)):
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if predicate(leaf):
                yield (prefix + path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((prefix + path, leaf))
    stack.append(id(module))
    for path, sub in submodules:
        yield from _flatten_module(sub, predicate, with_path, path, seen, stack)
    stack.pop()
