"""CpuOptions is a plain immutable class (backends/cpu/options.py: a dataclass's processing
costs a cache hit's import ~0.3 ms). It must behave as the frozen dataclass it replaced:
every field in __init__ (in FIELDS' order), equality, hashing, repr, `replace` and no
assignment; EmulatedOptions (cuda/emulated.py) adds a field and other defaults."""

import copy
import inspect
import pickle

import pytest

from ember.backends.cpu.options import CpuOptions

DEFAULTS = {"cpu": None, "features": None, "opt_level": 3, "gemm": None, "threads": None,
            "vectorize": True, "codegen_level": None, "llvm_passes": None}


def test_init_takes_every_field_in_order_with_its_default():
    params = list(inspect.signature(CpuOptions.__init__).parameters.values())[1:]
    assert tuple(p.name for p in params) == CpuOptions.FIELDS
    assert {p.name: p.default for p in params} == DEFAULTS
    assert {name: getattr(CpuOptions(), name) for name in CpuOptions.FIELDS} == DEFAULTS


def test_equality_hash_and_repr_see_every_field():
    base = CpuOptions()
    for name in CpuOptions.FIELDS:
        other = base.replace(**{name: "x"})
        assert getattr(other, name) == "x"
        assert other != base, name
        assert other == other.replace() and hash(other) == hash(other.replace()), name
        assert f"{name}='x'" in repr(other)
    same = base.replace()
    assert same == base and hash(same) == hash(base) and same is not base
    assert repr(base) == ("CpuOptions(cpu=None, features=None, opt_level=3, gemm=None, "
                          "threads=None, vectorize=True, codegen_level=None, "
                          "llvm_passes=None)")
    assert base != DEFAULTS and len({base, CpuOptions(), same}) == 1


def test_fields_cannot_be_assigned_deleted_or_added():
    options = CpuOptions(opt_level=1)
    with pytest.raises(AttributeError, match="immutable"):
        options.opt_level = 2
    with pytest.raises(AttributeError, match="immutable"):
        del options.cpu
    with pytest.raises(AttributeError):
        options.other = 1
    assert options.opt_level == 1 and not hasattr(options, "__dict__")


def test_replace_rejects_an_unknown_field():
    with pytest.raises(TypeError, match="colour"):
        CpuOptions().replace(colour="red")


def test_pickle_and_copy_keep_every_field():
    options = CpuOptions(cpu="znver3", threads=2, vectorize=False)
    for clone in (pickle.loads(pickle.dumps(options)), copy.copy(options),
                  copy.deepcopy(options)):
        assert clone == options and type(clone) is CpuOptions


def test_emulated_options_add_a_field_and_keep_it_through_replace_and_resolve():
    from ember.backends.cuda.backend import CudaOptions
    from ember.backends.cuda.emulated import EmulatedOptions
    options = EmulatedOptions(cuda=CudaOptions(tiles=(1, 32)))
    assert (options.gemm, options.threads, options.cuda.tiles) == ("loops", 1, (1, 32))
    assert options.FIELDS == CpuOptions.FIELDS + ("cuda",)
    changed = options.replace(opt_level=1)
    assert type(changed) is EmulatedOptions and changed.cuda == options.cuda
    assert changed != options and changed == options.replace(opt_level=1)
    assert options.resolved().cuda == options.cuda
    assert options != CpuOptions(gemm="loops", threads=1)
    assert "cuda=CudaOptions(" in repr(options)
    assert pickle.loads(pickle.dumps(options)) == options
    with pytest.raises(AttributeError):
        options.cuda = None
