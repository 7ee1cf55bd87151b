"""Target CPUs of an AOT library: the manifest records the features the named CPU implies
(not an empty list), and both loaders refuse a machine that lacks one (it would be SIGILL
at the first call); names LLVM cannot compile x86-64 code for are refused before LLVM
sees them (a 32-bit CPU aborted the process)."""

import json

import pytest

import ember as em
from ember import aot_artifact, aot_loader
from ember.backends.cpu.aot.targets import FEATURES
from ember.tools.ember_compile import main

from aot_harness import run_clean


def _fp16(x, y):
    return x * y + x


@pytest.fixture(scope="module")
def sapphire(tmp_path_factory):
    out = tmp_path_factory.mktemp("spr")
    em.aot.compile(_fp16, ["f16[?]", "f16[?]"], out_dir=str(out), name="half",
                   target_cpu="sapphirerapids")
    return out


def test_named_cpu_records_the_features_it_implies(sapphire):
    record = json.loads((sapphire / "half.json").read_text())
    features = record["target"]["features"].split(",")
    assert {"+avx512fp16", "+amx-tile", "+avx512f", "+avx2", "+fma"} <= set(features)


def _flags_without(*missing):
    every = set(aot_artifact._CPUINFO.values())
    return lambda: every - set(missing)


def test_both_loaders_refuse_a_cpu_lacking_a_feature(sapphire, monkeypatch):
    monkeypatch.setattr(aot_artifact, "_host_flags", _flags_without("avx512_fp16", "amx_tile"))
    message = r"compiled for CPU sapphirerapids and needs amx-tile, avx512fp16, which " \
              r"this CPU lacks"
    with pytest.raises(em.errors.ArtifactError, match=message):
        em.aot.load(str(sapphire))
    with pytest.raises(aot_loader.ArtifactError, match=message):
        aot_loader.load(str(sapphire))  # the numpy-only loader: the same module
    monkeypatch.setattr(aot_artifact, "_host_flags", _flags_without())
    lib = em.aot.load(str(sapphire))  # a machine with them all loads it
    assert lib.manifest["target"]["cpu"] == "sapphirerapids"


@pytest.mark.parametrize("cpu", ["x86-64-v4", "skylake-avx512", "znver3"])
def test_every_named_cpu_lists_its_level(cpu):
    assert set(FEATURES["x86-64-v2"]) <= set(FEATURES[cpu])
    assert ("avx512f" in FEATURES[cpu]) == (cpu != "znver3")


@pytest.mark.parametrize("cpu", ["pentium4", "i686", "athlon-xp", "cortex-a53", "bogus"])
def test_cpus_that_are_not_x86_64_are_refused_before_llvm(cpu, tmp_path):
    with pytest.raises(em.aot.AotError, match=rf"target_cpu '{cpu}' is not an x86-64 CPU"):
        em.aot.compile(_fp16, ["f32[?]", "f32[?]"], out_dir=str(tmp_path),
                       target_cpu=cpu)


def test_cli_prints_an_error_line_for_a_32_bit_cpu(tmp_path, capsys):
    script = tmp_path / "m.py"
    script.write_text("def f(x):\n    return x + 1.0\n")
    assert main([f"{script}:f", "--signature", "f32[?]", "--out", str(tmp_path / "o"),
                 "--target-cpu", "pentium4"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ember-compile: error: target_cpu 'pentium4' is not an x86-64")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_the_numpy_only_loader_refuses_it_in_a_clean_process(sapphire, tmp_path):
    code = ("import sys\n"
            f"sys.path.insert(0, {str(sapphire)!r})\n"
            "import ember_aot_artifact, ember_aot_loader\n"
            "flags = set(ember_aot_artifact._CPUINFO.values()) - {'avx512_fp16'}\n"
            "ember_aot_artifact._host_flags = lambda: flags\n"
            "try:\n"
            f"    ember_aot_loader.load({str(sapphire)!r})\n"
            "except ember_aot_loader.ArtifactError as e:\n"
            "    print(type(e).__name__, e)\n")
    done = run_clean(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ArtifactError ")
    assert "compiled for CPU sapphirerapids and needs avx512fp16, which this CPU lacks" in \
        done.stdout
