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
    (["--backend", "cuda", "--target", "cpu"], "--target=cpu compiles with the cpu backend"),
    (["--target", "cuda:"], "'cuda:' names no chip: give e.g. cuda:sm_90"),
    (["--target", "cuda", "--from", "llvmir"], "--from=llvmir is not a stage of the cuda "
                                               "backend"),
    (["--target", "cuda", "--from", "mapped"], "the input has ember ops, so it is not at the "
                                               "mapped stage: drop --from"),
])
def test_bad_cuda_command_lines_are_errors(source, args, message):
    check(run("ember-compile", [source, *args]), 1, message)


def test_target_cpu_is_the_default_backend(source):
    result = run("ember-compile", [source, "--target", "cpu", "--emit=llvmir"])
    check(result, 0)
    assert "define void @f(" in result.stdout.decode()


def test_a_later_stage_read_as_ember_ir_is_upstream_ir_or_a_hint_for_from(source, tmp_path):
    # upstream IR is valid input at any stage: the mapped loops lower as they are ...
    mapped = run("ember-compile", [source, "--target", "cuda:sm_90", "--emit=mapped"])
    saved = tmp_path / "mapped.mlir"
    saved.write_bytes(mapped.stdout)
    again = run("ember-compile", [str(saved), "--target", "cuda:sm_90"])
    check(again, 0)
    assert ".target sm_90" in again.stdout.decode()
    # ... but launches lowered again from the start fail deep inside: a note says --from
    gpu = run("ember-compile", [source, "--target", "cuda:sm_90", "--emit=gpu"])
    saved = tmp_path / "gpu.mlir"
    saved.write_bytes(gpu.stdout)
    check(run("ember-compile", [str(saved), "--target", "cuda:sm_90"],
              env={"EMBER_REPRO_DIR": "off"}), 1,
          "note: the input has no ember ops but memrefs or GPU/LLVM ops: if it is the output "
          "of a stage, say which with --from=<stage>")


def test_kernels_lowered_for_one_chip_are_not_relabelled_for_another(source, tmp_path):
    nvvm = run("ember-compile", [source, "--target", "cuda:sm_90", "--emit=nvvm"])
    check(nvvm, 0)
    saved = tmp_path / "nvvm.mlir"
    saved.write_bytes(nvvm.stdout)
    check(run("ember-compile", [str(saved), "--target", "cuda:sm_70", "--from=nvvm"]), 1,
          "the input's kernels were lowered for sm_90 (its #nvvm.target), not for "
          "--target=cuda:sm_70's sm_70")


@pytest.mark.parametrize("flags", [["--print-ir-after=canonicalize"],
                                   ["--print-ir-before=gpu-module-to-binary"],
                                   ["--print-ir-after-change"], ["--timing",
                                                                 "--print-ir-after=cse"]])
def test_printing_around_a_pass_through_the_gpu_stages_does_not_abort(source, flags):
    # each upstream pass runs in a PassManager of its own inside the instrumented one;
    # one that registers dialects (NVVM) there made MLIR abort the process
    result = run("ember-compile", [source, "--target", "cuda:sm_90", "--emit=ptx", *flags,
                                   "-o", "/dev/null"])
    check(result, 0)


def test_ahead_of_time_compiles_refuse_a_gpu_target(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import ember as em\n\n\ndef f(x):\n    return x * 2.0\n")
    check(run("ember-compile", [f"{script}:f", "--signature", "f32[4]", "--target",
                                "cuda:sm_90", "--out", str(tmp_path / "out")]), 1,
          "--target lowers an IR file; SCRIPT.py:fn --out DIR writes a library")


def test_ahead_of_time_output_folder_may_be_relative(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import ember as em\n\n\ndef f(x):\n    return x * 2.0\n")
    import subprocess
    from tool_runner import executable
    done = subprocess.run([executable("ember-compile"), "model.py:f", "--signature", "f32[4]",
                           "--out", "rel"], cwd=tmp_path, capture_output=True, timeout=300)
    check(done, 0)
    assert (tmp_path / "rel" / "libf.so").is_file()


def test_a_function_without_kernels_prints_a_comment(tmp_path):
    empty = tmp_path / "empty.mlir"
    empty.write_text("func.func @f(%x: tensor<4xf32>) {\n  return\n}\n")
    result = run("ember-compile", [str(empty), "--target", "cuda:sm_90"])
    check(result, 0)
    assert result.stdout.decode() == ("// no GPU kernels: nothing in this function needs "
                                      "computing on a device\n")
