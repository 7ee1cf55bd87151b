"""Acceptance 1 of issue 15: a model compiled ahead of time runs in a process with only
numpy and the artifact (no project source, no mlir), matching the JIT bit for bit, on
several sizes of its dynamic batch dim."""

import json

import numpy as np
import pytest

import ember as em
from aot_harness import own_kernels_jit, run_clean, same_bits


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    rng = np.random.default_rng(0)
    w1 = em.Variable(rng.standard_normal((20, 32)).astype(np.float32), name="w1")
    b1 = em.Variable(rng.standard_normal(32).astype(np.float32), name="b1")
    w2 = em.Variable(rng.standard_normal((32, 5)).astype(np.float32), name="w2")

    @em.function(input_signature=[em.TensorSpec([None, 20], em.float32)])
    def forward(x):
        h = em.nn.relu(em.matmul(x, w1) + b1)
        logits = em.matmul(h, w2)
        return em.nn.softmax(logits), em.argmax(logits, axis=-1)

    out = tmp_path_factory.mktemp("mlp")
    em.aot.compile(forward, out_dir=str(out), name="mlp")
    return forward, out


def test_clean_process_matches_the_jit_bit_for_bit(mlp, tmp_path):
    forward, out = mlp
    rng = np.random.default_rng(1)
    batches = {f"x{n}": rng.standard_normal((n, 20)).astype(np.float32) for n in (1, 7, 0)}
    np.savez(tmp_path / "inputs.npz", **batches)
    code = ("import numpy as np\n"
            f"sys.path.insert(0, {str(out)!r})\n"
            "import ember_aot_loader\n"
            f"f = ember_aot_loader.load({str(out)!r})\n"
            "inputs = np.load('inputs.npz')\n"
            "results = {}\n"
            "for key in inputs.files:\n"
            "    probs, classes = f(inputs[key])\n"
            "    results[key + 'p'], results[key + 'c'] = probs, classes\n"
            "np.savez('outputs.npz', **results)\n"
            "print('ran', sorted(sys.modules.keys() & {'mlir', 'ember'}))\n")
    done = run_clean(tmp_path, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran []"
    got = np.load(tmp_path / "outputs.npz")
    with own_kernels_jit():
        for key, x in batches.items():
            probs, classes = forward(x)
            assert same_bits(got[key + "p"], probs.numpy()), key
            assert same_bits(got[key + "c"], classes.numpy()), key


def test_manifest_states_signature_versions_target_and_hashes(mlp):
    _, out = mlp
    record = json.loads((out / "mlp.json").read_text())
    assert record["entries"][0]["inputs"] == [{"name": "x", "dtype": "float32",
                                               "shape": [None, 20]}]
    assert record["entries"][0]["outputs"] == [{"dtype": "float32", "shape": [None, 5]},
                                               {"dtype": "int64", "shape": [None]}]
    assert set(record["versions"]) == {"ember", "llvm", "llvmlite", "mlir"}
    assert record["target"]["requested"] == "host" and record["target"]["cpu"]
    assert set(record["files"]) == {"libmlp.so", "mlp.h", "ember_aot_loader.py",
                                   "ember_aot_artifact.py"}
    assert all(len(h) == 64 for h in record["files"].values())


def test_in_process_load_matches_the_jit_and_raises_embers_classes(mlp):
    forward, out = mlp
    lib = em.aot.load(str(out))
    x = np.linspace(-1, 1, 60, dtype=np.float32).reshape(3, 20)
    with own_kernels_jit():
        want = forward(x)
    got = lib(x)
    assert all(same_bits(g, w.numpy()) for g, w in zip(got, want))
    with pytest.raises(em.errors.InvalidArgumentError, match=r"input #0 \(x\) has shape"):
        lib(np.zeros((3, 21), np.float32))
