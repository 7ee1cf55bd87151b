"""Acceptance 3 of issue 15: `load` refuses an artifact whose library, header or manifest
changed by one byte, whose library lacks an entry its manifest lists, or states other
signatures, or that is not for this machine, with a message naming the file."""

import json
import shutil

import numpy as np
import pytest

import ember as em
from ember import aot_artifact, aot_loader


def _compile(out, width):
    @em.function(input_signature=[em.TensorSpec([None, width], em.float32)])
    def double(x):
        return x * 2.0
    em.aot.compile(double, out_dir=str(out), name="twice")
    return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return _compile(tmp_path_factory.mktemp("twice"), 3)


@pytest.fixture
def artifact(pristine, tmp_path):
    out = tmp_path / "artifact"
    shutil.copytree(pristine, out)
    return out


def _flip(path, at):
    data = bytearray(path.read_bytes())
    data[at] ^= 0x01
    path.write_bytes(bytes(data))


def _resign(out, change):
    """Edits the manifest as a consistent forger would: new hashes, new checksum."""
    path = out / "twice.json"
    record = json.loads(path.read_text())
    change(record)
    record["files"] = {f: aot_loader.file_sha256(str(out / f)) for f in record["files"]}
    record["sha256"] = aot_loader.checksum(record)
    path.write_bytes(aot_loader.canonical(record))


def test_pristine_artifact_loads(artifact):
    assert em.aot.load(str(artifact))(np.ones((2, 3), np.float32)).tolist() == [[2.0] * 3] * 2


@pytest.mark.parametrize("name", ["libtwice.so", "twice.h", "ember_aot_loader.py",
                                  "ember_aot_artifact.py"])
def test_one_byte_changed_in_a_file_is_refused(artifact, name):
    path = artifact / name
    _flip(path, path.stat().st_size // 2)
    with pytest.raises(em.errors.ArtifactError, match=rf"{name} does not match its sha256"):
        em.aot.load(str(artifact))


@pytest.mark.parametrize("at", [0, 40, -2])
def test_one_byte_changed_in_the_manifest_is_refused(artifact, at):
    path = artifact / "twice.json"
    _flip(path, at % path.stat().st_size)
    with pytest.raises(em.errors.ArtifactError, match=r"twice\.json is corrupt"):
        em.aot.load(str(artifact))


def test_manifest_listing_an_entry_the_library_lacks_is_refused(artifact):
    def add_entry(record):
        extra = dict(record["entries"][0], name="triple")
        record["entries"].append(extra)
    _resign(artifact, add_entry)
    with pytest.raises(em.errors.ArtifactError, match=r"libtwice\.so states signatures"):
        em.aot.load(str(artifact))


def test_library_of_another_signature_is_refused(artifact, tmp_path):
    other = _compile(tmp_path / "other", 4)
    shutil.copyfile(other / "libtwice.so", artifact / "libtwice.so")
    _resign(artifact, lambda record: None)
    with pytest.raises(em.errors.ArtifactError,
                       match=r"libtwice\.so states signatures that differ from .*twice\.json"):
        em.aot.load(str(artifact))


def test_missing_entry_point_is_refused(artifact, monkeypatch):
    def rename(record):
        record["name"] = "thrice"  # the library exports twice_*, not thrice_*
    _resign(artifact, rename)
    with pytest.raises(em.errors.ArtifactError,
                       match=r"libtwice\.so has no symbol thrice_signature"):
        em.aot.load(str(artifact))


def test_other_machine_or_format_is_refused(artifact):
    def arm(record):
        record["target"]["triple"] = "aarch64-unknown-linux-gnu"
    _resign(artifact, arm)
    with pytest.raises(em.errors.ArtifactError, match=r"twice\.json: the library was "
                                                      r"compiled for aarch64"):
        em.aot.load(str(artifact))
    _resign(artifact, lambda record: record.update(format="ember-aot/0"))
    with pytest.raises(em.errors.ArtifactError, match=r"format 'ember-aot/0'"):
        em.aot.load(str(artifact))


def test_cpu_features_the_host_lacks_are_refused(artifact, monkeypatch):
    monkeypatch.setattr(aot_artifact, "_host_flags", lambda: {"sse2"})
    _resign(artifact, lambda record: record["target"].update(cpu="x86-64-v3"))
    with pytest.raises(em.errors.ArtifactError, match=r"x86-64-v3 and needs ([\w.-]+, )*avx, avx2"):
        em.aot.load(str(artifact))
