"""CpuOptions writes its dataclass methods out (backends/cpu/options.py: generating them
costs a cache hit's import ~0.9 ms). They must stay those dataclasses would generate: every
field in __init__ (same order and defaults), equality, hashing and repr."""

import dataclasses
import inspect

from ember.backends.cpu.options import CpuOptions


def test_init_takes_every_field_in_order_with_its_default():
    fields = dataclasses.fields(CpuOptions)
    params = list(inspect.signature(CpuOptions.__init__).parameters.values())[1:]
    assert [p.name for p in params] == [f.name for f in fields]
    assert [p.default for p in params] == [f.default for f in fields]


def test_equality_hash_and_repr_see_every_field():
    base = CpuOptions()
    for f in dataclasses.fields(CpuOptions):
        other = dataclasses.replace(base, **{f.name: "x" if f.default != "x" else "y"})
        assert other != base, f.name
        assert hash(other) == hash(dataclasses.replace(other)), f.name
        assert f"{f.name}=" in repr(other)
    same = dataclasses.replace(base)
    assert same == base and hash(same) == hash(base)
    assert repr(base).startswith("CpuOptions(")
