"""The parts of compile-cache keys found without LLVM (backends/cpu/host_target.py): the host
record is what LLVM says, a wrong one is corrected before anything is compiled, and the
remembered source hash changes with the files."""

import json
import os
import time
import types

import numpy as np
import pytest

import ember as em
from ember.backends.cpu import cache, host_target
from ember.backends.cpu.compiler import compile_function
from ember.dialects.ember.types import TensorType

F32x4 = TensorType(em.float32, (4,))
MODULE = ('func.func @hosted(%x: tensor<?xf32>) -> tensor<?xf32> {\n'
          '  %0 = "ember.mul"(%x, %x) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>\n'
          '  return %0 : tensor<?xf32>\n}\n')


def test_the_host_record_holds_what_llvm_says(cache_dir):
    assert host_target.host() == host_target.measured()
    (record,) = cache_dir.glob("host-*.json")
    assert json.loads(record.read_text()) == list(host_target.measured())
    host_target.host.cache_clear()
    assert host_target.host() == host_target.measured()  # read back from the record


def test_a_wrong_host_record_is_corrected_before_compiling(cache_dir):
    """A record naming other CPU features only costs a cache miss: the compile checks it
    against LLVM, rewrites it and generates code for what LLVM says the host is."""
    real = host_target.measured()
    host_target.host()
    (record,) = cache_dir.glob("host-*.json")
    record.write_text(json.dumps([real[0], "+not-this-machine", real[2]]))
    host_target.host.cache_clear()
    assert host_target.host()[1] == "+not-this-machine"
    exe = compile_function(MODULE, "hosted", [F32x4])
    assert host_target.host() == real
    assert json.loads(record.read_text()) == list(real)
    x = np.arange(4, dtype=np.float32)
    np.testing.assert_array_equal(exe([x])[0], x * x)
    assert exe is compile_function(MODULE, "hosted", [F32x4])  # keyed by the real host now


def test_a_damaged_host_record_is_replaced(cache_dir):
    host_target.host()
    (record,) = cache_dir.glob("host-*.json")
    record.write_text("{not json")
    host_target.host.cache_clear()
    assert host_target.host() == host_target.measured()
    assert json.loads(record.read_text()) == list(host_target.measured())


def _age(path, seconds: int) -> None:
    os.utime(path, ns=(time.time_ns() - seconds * 10**9,) * 2)


RACY_S = 0.3  # the racily-clean window of these tests (host_target.RACY_NS: 5 s)


def _settle() -> None:
    """Waits out the racily-clean window: a change (its ctime) older than it is settled
    (utime cannot age a ctime)."""
    time.sleep(RACY_S + 0.05)


def test_the_source_hash_follows_the_files(tmp_path, monkeypatch):
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(host_target, "RACY_NS", int(RACY_S * 1e9))
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    a, b, notes = folder / "a.py", folder / "sub" / "b.py", folder / "notes.txt"
    a.write_text("A = 1\n")
    b.write_text("B = 2\n")
    notes.write_text("not source\n")
    _settle()
    package = types.SimpleNamespace(__path__=[str(folder)])
    first = host_target.source_hash((package,))
    assert len(list((tmp_path / "cache").glob("source-*"))) == 1
    assert host_target.source_hash((package,)) == first  # from the record
    notes.write_text("still not source, longer\n")
    assert host_target.source_hash((package,)) == first
    b.write_text("B = 3\n")  # the same size, written just now: hashed, not remembered
    second = host_target.source_hash((package,))
    assert second != first
    assert len(list((tmp_path / "cache").glob("source-*"))) == 1
    b.write_text("B = 4\n")  # maybe within the same clock tick: still seen
    third = host_target.source_hash((package,))
    assert third not in (first, second)
    _settle()
    assert host_target.source_hash((package,)) == third
    assert len(list((tmp_path / "cache").glob("source-*"))) == 2
    monkeypatch.setenv("EMBER_CACHE_DISABLE", "1")  # no record: computed from the files
    assert host_target.source_hash((package,)) == third


def test_an_edit_keeping_size_and_mtime_changes_the_source_hash(tmp_path, monkeypatch):
    """An edit that keeps the file's size and puts its mtime back (`touch -r`, a copy
    keeping times) still changes the remembered stats: its ctime moved."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(host_target, "RACY_NS", int(RACY_S * 1e9))
    folder = tmp_path / "pkg"
    folder.mkdir()
    a = folder / "a.py"
    a.write_text("A = 1\n")
    _age(a, 3600)
    old = os.stat(a)
    _settle()
    package = types.SimpleNamespace(__path__=[str(folder)])
    first = host_target.source_hash((package,))
    assert host_target.source_hash((package,)) == first  # remembered
    a.write_text("A = 2\n")
    os.utime(a, ns=(old.st_atime_ns, old.st_mtime_ns))
    new = os.stat(a)
    assert (new.st_size, new.st_mtime_ns, new.st_ino) == (old.st_size, old.st_mtime_ns,
                                                          old.st_ino)
    _settle()  # settled again: looked up by its stats, which name the new ctime
    assert host_target.source_hash((package,)) != first
    assert len(list((tmp_path / "cache").glob("source-*"))) == 2


def test_the_remembered_listing_follows_the_folders(tmp_path, monkeypatch):
    """The files' listing is remembered once its folders are settled, and a file or a
    folder added, removed or renamed since is seen (its folder's mtime moved)."""
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.py").write_text("A = 1\n")
    (folder / "sub" / "b.py").write_text("B = 2\n")
    package = types.SimpleNamespace(__path__=[str(folder)])

    def settle():
        for path in (*folder.rglob("*"), folder):
            _age(path, 3600)
    settle()
    first = host_target.source_hash((package,))
    assert len(list((tmp_path / "cache").glob("files-*"))) == 1
    assert host_target.source_hash((package,)) == first  # from the listing's record
    changes = [lambda: (folder / "sub" / "c.py").write_text("C = 3\n"),
               lambda: (folder / "sub" / "c.py").rename(folder / "sub" / "d.py"),
               lambda: (folder / "new").mkdir() or (folder / "new" / "e.py").write_text("E"),
               lambda: (folder / "new" / "f.py").write_text("F = 6\n"),
               lambda: (folder / "sub" / "d.py").unlink()]
    seen = {first}
    for change in changes:
        change()
        settle()  # folders as old as the record's: only their mtimes differ
        digest = host_target.source_hash((package,))
        assert digest not in seen
        seen.add(digest)
        for path in folder.rglob("*.py"):  # the next listing's record is written settled
            _age(path, 3600)
    assert host_target.source_hash((package,)) == digest
    mtime = os.stat(folder / "new").st_mtime_ns
    (folder / "new" / "f.py").unlink()  # and its folder's mtime put back: still seen
    os.utime(folder / "new", ns=(mtime, mtime))
    assert host_target.source_hash((package,)) not in seen


def test_a_library_reinstalled_changes_its_stamp(tmp_path):
    """Keys name the code generators' library files by path, size, mtime and inode: a
    reinstall (a new file renamed into place), even of the same size, is another stamp."""
    lib = tmp_path / "libx.so"
    lib.write_bytes(b"a" * 64)
    first = host_target.file_stamp(str(lib))
    new = tmp_path / "libx.so.new"
    new.write_bytes(b"b" * 64)
    os.replace(new, lib)
    assert host_target.file_stamp(str(lib)) != first
    assert host_target.file_stamp(str(tmp_path / "missing.so")) == "unknown"
    assert host_target.file_stamp(None) == "unknown"


def test_keys_name_the_mlir_and_llvmlite_libraries(monkeypatch, tmp_path):
    import mlir._mlir_libs._mlir as ext
    stamp = host_target.mlir_stamp()
    assert host_target.file_stamp(ext.__file__) in stamp
    assert "libMLIRPythonCAPI" in stamp
    assert host_target.llvmlite_library() is not None
    fake = tmp_path / "libllvmlite.so"
    fake.write_bytes(b"\0" * 8)
    cache.versions.cache_clear()
    try:
        before = cache.versions()
        assert host_target.file_stamp(host_target.llvmlite_library()) in before
        monkeypatch.setattr(host_target, "llvmlite_library", lambda: str(fake))
        cache.versions.cache_clear()
        assert cache.versions() != before
    finally:
        monkeypatch.undo()
        cache.versions.cache_clear()
