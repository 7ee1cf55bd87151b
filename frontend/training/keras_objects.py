"""What Keras's configurable objects share (keras/utils/generic_utils.py, Keras 2): the
`get_config` / `from_config` / repr of initializers and regularizers, and the
`get(identifier)` and `serialize(obj)` of their modules."""

from __future__ import annotations

from typing import Callable


class Configurable:
    """`get_config()` (the constructor's arguments; none by default), `from_config(config)`
    (the constructor called with them) and a repr showing them."""

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_config().items())
        return f"{type(self).__name__}({args})"


def resolve(identifier, where: str, lookup: Callable, expected: str):
    """A module's `get`: None stays None; a serialized `{"class_name": ..., "config":
    {...}}` is rebuilt and a name (`lookup(name, where)`) constructed; a callable is taken
    as it is; anything else is a TypeError saying it is not `expected`."""
    if identifier is None:
        return None
    if isinstance(identifier, dict) and isinstance(identifier.get("class_name"), str):
        cls = lookup(identifier["class_name"], where)
        config = dict(identifier.get("config") or {})
        return cls.from_config(config) if hasattr(cls, "from_config") else cls(**config)
    if isinstance(identifier, str):
        return lookup(identifier, where)()
    if callable(identifier):
        return identifier
    raise TypeError(f"{where}: {expected}, got {identifier!r}")


def serialize(obj, base: type, where: str, instead: str):
    """`{"class_name": ..., "config": ...}` of a `base` instance, a named function's
    `__name__`, None for None; a lambda or unnamed callable is a ValueError (`instead`
    says what to use)."""
    if obj is None:
        return None
    if isinstance(obj, base):
        return {"class_name": type(obj).__name__, "config": obj.get_config()}
    name = getattr(obj, "__name__", None)
    if name is None or name == "<lambda>":
        raise ValueError(f"{where}: cannot name {obj!r}; {instead}")
    return name
