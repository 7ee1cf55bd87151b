"""`ember-compile --target cuda[:CHIP]`: the CUDA backend's stages from the command line, on a
machine without a GPU (PTX is text; nothing here needs a device)."""

import pytest

from tool_runner import check, run

VALID = b"""func.func @f(%x: tensor<100x37xf32>, %y: tensor<37xf32>) -> tensor<100xf32> {
  %0 = "ember.tanh"(%x) : (tensor<100x37xf32>) -> tensor<100x37xf32>
  %1 = "ember.add"(%0, %y) : (tensor<100x37xf32>, tensor<37xf32>) -> tensor<100x37xf32>
  %2 = "ember.reduce_sum"(%1) {axes = array<i64: 1>, keepdims = false} : (tensor<100x37xf32>) -> tensor<100xf32>
  return %2 : tensor<100xf32>
}
"""


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "in.mlir"
    path.write_bytes(VALID)
    return str(path)


@pytest.mark.parametrize("target,chip,version", [("cuda:sm_90", "sm_90", "8.0"),
                                                 ("cuda:sm_80", "sm_80", "7.0"),
                                                 ("cuda", "sm_80", "7.0")])
def test_target_cuda_prints_ptx_for_the_chip(source, target, chip, version):
    result = run("ember-compile", [source, "--target", target])
    check(result, 0)
    out = result.stdout.decode()
    assert out.startswith("// gpu.binary @")
    assert f".target {chip}" in out and f".version {version}" in out
    assert ".entry" in out


@pytest.mark.parametrize("stage,marker", [("linalg", "linalg.generic"),
                                          ("bufferized", "memref<100x37xf32>"),
                                          ("mapped", "#gpu.loop_dim_map"),
                                          ("gpu", "gpu.launch_func"),
                                          ("nvvm", "nvvm."),
                                          ("binary", "gpu.binary"),
                                          ("host", "@mgpuLaunchKernel")])
def test_every_stage_prints_and_the_next_resumes_from_it(source, stage, marker, tmp_path):
    result = run("ember-compile", [source, "--target", "cuda:sm_90", f"--emit={stage}"])
    check(result, 0)
    assert marker in result.stdout.decode()
    if stage in ("host",):
        return
    saved = tmp_path / f"{stage}.mlir"
    saved.write_bytes(result.stdout)
    resumed = run("ember-compile", [str(saved), "--target", "cuda:sm_90", f"--from={stage}",
                                    "--emit=ptx"])
    check(resumed, 0)
    assert ".target sm_90" in resumed.stdout.decode()


@pytest.mark.parametrize("args,message", [
    (["--target", "cuda:sm_91"], "unknown CUDA target 'sm_91'; targets: sm_70"),
    (["--target", "tpu"], "unknown target 'tpu': give cuda or cuda:<chip>"),
    (["--target", "cuda", "--cpu", "znver4"], "--cpu and --features choose a CPU"),
    (["--target", "cuda", "--backend", "cpu"], "compiles with the cuda backend, not "
                                               "--backend=cpu"),
    (["--target", "cuda", "--emit", "asm"], "--emit=asm: the cuda backend's stages are "
                                            "linalg, bufferized, mapped"),
    (["--backend", "cuda", "--emit", "llvmir"], "--emit=llvmir: the cuda backend's stages"),
])
def test_bad_cuda_command_lines_are_errors(source, args, message):
    check(run("ember-compile", [source, *args]), 1, message)


def test_target_cpu_is_the_default_backend(source):
    result = run("ember-compile", [source, "--target", "cpu", "--emit=llvmir"])
    check(result, 0)
    assert "define void @f(" in result.stdout.decode()
