"""`ember-compile SCRIPT.py:fn --signature ... --out DIR`: the command line's AOT mode; its
errors are one `error:` line and exit status 1; `--emit` still lowers IR files, and with
SCRIPT.py:fn prints (or writes, with --out FILE) the function's module at that stage."""

import numpy as np

import ember as em
from ember.tools.ember_compile import main

SCRIPT = '''
import numpy as np
import ember as em

scale = em.Variable(np.float32(3.0), name="scale")

def scaled(x, y):
    return x * scale + y

@em.function(input_signature=[em.TensorSpec([None], em.int32)])
def square(n):
    return n * n

if __name__ == "__main__":
    raise SystemExit("the script's main part must not run")
'''


def test_compiles_a_function_of_a_script(tmp_path, capsys):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    code = main([f"{script}:scaled", "--signature", "f32[?]", "--signature", "f32[]",
                 "--out", str(out), "--name", "scaler", "--no-freeze"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert "scaler_scaled(x: float32[?], y: float32[]) -> (float32[?])" in printed.out
    lib = em.aot.load(str(out))
    assert lib(np.array([1, 2], np.float32), np.float32(0.5)).tolist() == [3.5, 6.5]
    assert list(lib.variables) == ["scale:0"]
    assert main([f"{script}:square", "--out", str(out)]) == 0  # its input_signature
    assert em.aot.load(str(out))(np.array([3], np.int32)).tolist() == [9]
    assert sorted(p.name for p in out.iterdir()) == [
        "ember_aot_artifact.py", "ember_aot_loader.py", "libsquare.so", "square.h",
        "square.json"]


def test_errors_are_one_line_with_status_1(tmp_path, capsys):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    cases = [([f"{script}:missing", "--out", str(tmp_path)], "defines no 'missing'"),
             ([f"{script}:scaled", "--signature", "f32[?", "--out", str(tmp_path)],
              "--signature: signature 'f32[?' is not of the form"),
             ([f"{script}:scaled", "--out", str(tmp_path)], "has no input_signature"),
             ([f"{script}:square"], "give --out DIR"),
             ([f"{tmp_path}/none.py:f", "--out", str(tmp_path)], "no such file")]
    for argv, message in cases:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_emit_still_lowers_ir(tmp_path, capsys):
    ir_file = tmp_path / "f.mlir"
    ir_file.write_text('func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n'
                       '  %y = "ember.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> '
                       'tensor<4xf32>\n  return %y : tensor<4xf32>\n}\n')
    assert main([str(ir_file), "--emit=linalg"]) == 0
    assert "linalg.generic" in capsys.readouterr().out


def test_a_bug_in_ember_is_an_internal_error_with_status_2(tmp_path, capsys, monkeypatch):
    from ember.runtime.aot import compile as aot_compile

    def broken(*args, **kwargs):
        raise ValueError("an internal inconsistency")

    monkeypatch.setattr(aot_compile, "build_entry", broken)
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    assert main([f"{script}:square", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "internal error: ValueError: an internal inconsistency" in err
    script.write_text("def f(x):\n    return x + 'text'\n")  # the script's own error
    assert main([f"{script}:f", "--signature", "f32[?]", "--out", str(tmp_path)]) == 1


def test_flags_of_the_ir_mode_are_refused_with_a_script(tmp_path, capsys):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    assert main([f"{script}:square", "--out", str(tmp_path / "o"), "--from=linalg"]) == 1
    err = capsys.readouterr().err
    assert "error: --from lowers an IR file; SCRIPT.py:fn --out DIR writes a library" in err
    assert not (tmp_path / "o").exists()
    assert main([f"{script}:square", "--emit=asm", "--cpu=znver3"]) == 1
    assert "--cpu cannot be used with SCRIPT.py:fn --emit" in capsys.readouterr().err


def test_emit_prints_a_scripts_stage_without_out(tmp_path, capsys):
    # --emit with SCRIPT.py:fn was refused, and without --out it asked for a library folder:
    # a stage prints to stdout, as mlir-opt and llc print
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    for stage, marker in (("linalg", "linalg.generic"), ("llvmir", "define "),
                          ("asm", ".globl")):
        assert main([f"{script}:square", f"--emit={stage}"]) == 0, capsys.readouterr().err
        assert marker in capsys.readouterr().out
    assert main([f"{script}:scaled", "--signature", "f32[?]", "--signature", "f32[]",
                 "--emit=bufferized"]) == 0
    assert "memref<?xf32" in capsys.readouterr().out
    assert main([f"{script}:square", "--emit=llvm", "--out", str(tmp_path / "f.mlir")]) == 0
    assert "llvm.func" in (tmp_path / "f.mlir").read_text()


def test_emit_obj_of_a_script_needs_a_file(tmp_path, capsys):
    script = tmp_path / "model.py"
    script.write_text(SCRIPT)
    assert main([f"{script}:square", "--emit=obj"]) == 1
    err = capsys.readouterr().err
    assert "--emit=obj is a binary object file, not text to print: give --out FILE.o" in err
    assert main([f"{script}:square", "--emit=obj", "--out", str(tmp_path)]) == 1
    assert "is a folder: give a file name" in capsys.readouterr().err
    obj = tmp_path / "square.o"
    assert main([f"{script}:square", "--emit=obj", "--out", str(obj)]) == 0
    assert obj.read_bytes()[:4] == b"\x7fELF"
