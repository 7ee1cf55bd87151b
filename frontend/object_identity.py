"""Identity for values whose `==` is elementwise and which cannot be hashed (em.Tensor,
em.Variable): their `ref()`, and containers keyed by identity (TensorFlow's
`util/object_identity.py`).

`weakref.WeakKeyDictionary` and `weakref.WeakSet` hash their keys and compare them with
`==`, so they cannot hold a Variable; the weak containers here hold it by `id()` and forget
it when it dies. A strong mapping needs no class: key a dict by `id(v)` (keeping `v` alive
beside it) or by `v.ref()`.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any, Iterator


class TensorRef:
    """A hashable handle on a Tensor or Variable (`x.ref()`, TF's `Reference`): equal to
    another only when both refer to the same object, so it can key a dict or join a set.

    Example:
      >>> import ember as em
      >>> v = em.Variable(1.0)
      >>> table = {v.ref(): "v"}
      >>> table[v.ref()], v.ref().deref() is v
      ('v', True)
    """

    __slots__ = ("_tensor",)

    def __init__(self, tensor):
        self._tensor = tensor

    def deref(self):
        """The tensor or variable referred to."""
        return self._tensor

    def __eq__(self, other) -> bool:
        return isinstance(other, TensorRef) and other._tensor is self._tensor

    def __hash__(self) -> int:
        return id(self._tensor)

    def __repr__(self) -> str:
        return f"<Reference wrapping {self._tensor!r}>"


class WeakIdentityKeyDictionary:
    """A mapping from objects, compared by identity and held weakly, to values: an entry
    goes when its key dies (`weakref.WeakKeyDictionary`, without `hash` or `==`)."""

    def __init__(self):
        self._data: dict[int, tuple[weakref.ref, Any]] = {}  # id -> (ref to key, value)
        # re-entrant: a key may die (and its callback run) while this thread holds it
        self._lock = threading.RLock()

    def _ref(self, key) -> weakref.ref:
        entry = self._data.get(id(key))
        if entry is not None and entry[0]() is key:
            return entry[0]
        forget = _forgetter(weakref.ref(self), id(key))
        return weakref.ref(key, forget)

    def __setitem__(self, key, value) -> None:
        with self._lock:
            self._data[id(key)] = (self._ref(key), value)

    def setdefault(self, key, default=None):
        with self._lock:
            entry = self._data.get(id(key))
            if entry is not None and entry[0]() is key:
                return entry[1]
            self._data[id(key)] = (self._ref(key), default)
            return default

    def get(self, key, default=None):
        entry = self._data.get(id(key))
        return entry[1] if entry is not None and entry[0]() is key else default

    def __contains__(self, key) -> bool:
        entry = self._data.get(id(key))
        return entry is not None and entry[0]() is key

    def items(self) -> list[tuple[Any, Any]]:
        """The live (key, value) pairs (a list: a key may die while it is being read)."""
        with self._lock:
            entries = self._data.copy().values()
        return [(key, value) for key, value in ((ref(), value) for ref, value in entries)
                if key is not None]

    def keys(self) -> list:
        return [key for key, _ in self.items()]

    def __iter__(self) -> Iterator:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.items())


class WeakIdentitySet:
    """A set of objects compared by identity and held weakly (`weakref.WeakSet`, without
    `hash` or `==`)."""

    def __init__(self):
        self._members = WeakIdentityKeyDictionary()

    def add(self, item) -> None:
        self._members[item] = None

    def __contains__(self, item) -> bool:
        return item in self._members

    def __iter__(self) -> Iterator:
        return iter(self._members.keys())

    def __len__(self) -> int:
        return len(self._members)


def _forgetter(owner: weakref.ref, key: int):
    """The callback that removes entry `key` of the dictionary `owner` refers to when its
    key dies (unless the entry is already another object's, which got the same id)."""
    def forget(dead: weakref.ref) -> None:
        mapping = owner()
        if mapping is None:
            return
        with mapping._lock:
            entry = mapping._data.get(key)
            if entry is not None and entry[0] is dead:
                del mapping._data[key]
    return forget
