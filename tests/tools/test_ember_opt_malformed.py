"""`ember-opt` on malformed input: an MLIR-style `error:` and exit status 1, never a crash.

Each case runs the installed `ember-opt` in a process of its own (tool_runner.py, with a
timeout) on a file that is truncated, binary, badly nested, mistyped, refers to unknown ops,
types or passes, or is too deeply nested for MLIR's recursive parser. A negative exit
status would mean a signal (abort, segfault); "Traceback" would mean an unhandled Python
exception; exit status 2 is the tool's own "internal error". Valid inputs among the cases
(the empty file) must exit 0.
"""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from tool_runner import check, run


@dataclasses.dataclass(frozen=True)
class Case:
    """One input and what ember-opt must do with it."""

    text: bytes | None  # file contents; None: the input path does not exist
    args: tuple[str, ...] = ()  # after the input path; "{dir}" is the test's temporary folder
    rc: int = 1
    stderr: str = ""  # a substring the diagnostics must contain (besides "error:")
    input: str = "{dir}/input.mlir"  # the input argument


def _b(text: str) -> bytes:
    return text.encode("utf-8")


def _func(body: str, args: str = "%x: tensor<4xf32>") -> bytes:
    return _b(f"func.func @f({args}) {{\n{body}\n  return\n}}\n")


NEG = '  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>'
VALID = _func(NEG)


def _nested_regions(depth: int) -> bytes:
    opens = "scf.execute_region { " * depth
    closes = "scf.yield }" + " scf.yield }" * (depth - 1)
    return _b(f"func.func @f() {{\n  {opens}{closes}\n  return\n}}\n")


def _nested_arrays(depth: int) -> bytes:
    return _b("module attributes {a = " + "[" * depth + "]" * depth + "} {}\n")


def _nested_tuples(depth: int) -> bytes:
    return _b("func.func private @f(" + "tuple<" * depth + "i32" + ">" * depth + ")\n")


def _chain(n: int) -> bytes:
    """v[i+1] = v[i] + v[i], n times: a use-def chain n ops deep."""
    ty = "tensor<4xf32>"
    lines = [f"func.func @f(%v0: {ty}) -> {ty} {{"]
    lines += [f'  %v{i + 1} = "ember.add"(%v{i}, %v{i}) : ({ty}, {ty}) -> {ty}'
              for i in range(n)]
    return _b("\n".join(lines) + f"\n  return %v{n} : {ty}\n}}\n")


def _nested_ifs(depth: int) -> bytes:
    body = '%y = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>\n scf.yield %y : tensor<4xf32>'
    for i in range(depth):
        body = (f"%r{i} = scf.if %b -> (tensor<4xf32>) {{\n {body}\n }} else {{\n"
                f" scf.yield %x : tensor<4xf32>\n }}\n scf.yield %r{i} : tensor<4xf32>")
    return _b("func.func @g(%b: i1, %x: tensor<4xf32>) -> tensor<4xf32> {\n"
              f"  %out = scf.execute_region -> tensor<4xf32> {{\n {body}\n }}\n"
              "  return %out : tensor<4xf32>\n}\n")


def _constant(value: str, ty: str) -> bytes:
    return _func(f'  %0 = "ember.constant"() {{value = {value}}} : () -> {ty}', args="")


CASES = {
    # -- text that is cut short or is not text at all -------------------------------------
    "empty_file": Case(b"", rc=0),
    "only_comments_and_blank_lines": Case(b"// nothing here\n\n   \n// at all\n", rc=0),
    "truncated_function": Case(b"func.func @f() {\n", stderr="expected"),
    "truncated_mid_type": Case(VALID[:VALID.index(b"(tensor<4") + 9]),
    "truncated_mid_string": Case(_b('func.func @f(%x: tensor<3xi32>) {\n'
                                    '  "ember.print"(%x) {end = "ab')),
    "truncated_mid_op_name": Case(b'func.func @f() {\n  %0 = "ember.ne'),
    "garbage_ascii": Case(b"@@@ ### $$$ !!! ~~~", stderr="error:"),
    "garbage_bytes_with_nul": Case(bytes(range(1, 32)) + b"\x00\x7f" * 8),
    "invalid_utf8": Case(b"\xff\xfe\xfd not utf-8", stderr="cannot read"),
    "invalid_utf8_in_comment": Case(b"// caf\xe9\n" + VALID, stderr="cannot read"),
    "random_binary": Case(bytes((i * 7919 + 13) % 256 for i in range(4096))),
    "utf8_byte_order_mark": Case(b"\xef\xbb\xbf" + VALID, stderr="unexpected character"),
    "mlir_bytecode_magic": Case(b"ML\xefR\x00\x05garbage"),
    # -- unbalanced or misplaced punctuation ---------------------------------------------
    "unbalanced_open_braces": Case(b"func.func @f() { { { {\n"),
    "unbalanced_close_braces": Case(b"}}}}\n", stderr="expected operation name"),
    "unbalanced_parentheses": Case(b"func.func @f(%x: tensor<4xf32> {\n  return\n}\n"),
    "unbalanced_angle_brackets": Case(_func(NEG.replace("-> tensor<4xf32>", "-> tensor<4xf32"))),
    "unterminated_string_literal": Case(_constant('dense<"abc> : tensor<!ember.string>',
                                                  "tensor<!ember.string>"),
                                        stderr="string literal"),
    "bad_string_escape": Case(_constant(r'dense<"\zz"> : tensor<!ember.string>',
                                        "tensor<!ember.string>"), stderr="unknown escape"),
    # -- values and types ---------------------------------------------------------------
    "undefined_value": Case(_func('  %0 = "ember.neg"(%y) : (tensor<4xf32>) -> tensor<4xf32>'),
                            stderr="use of undeclared SSA value"),
    "redefined_value": Case(_func(NEG + "\n" + NEG), stderr="redefinition of SSA value"),
    "operand_type_differs_from_definition": Case(
        _func('  %0 = "ember.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>'),
        stderr="expects different type than prior uses"),
    "result_type_wrong_for_op": Case(
        _func('  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<5xf32>'),
        stderr="result #0 has type tensor<5xf32>"),
    "return_type_mismatch": Case(_b("func.func @f() -> tensor<2xf32> {\n  return\n}\n"),
                                 stderr="enclosing function (@f) returns 1"),
    "dimension_too_large": Case(_b("func.func @f(%x: tensor<99999999999999999999xf32>) {\n"
                                   "  return\n}\n")),
    "negative_dimension": Case(_b("func.func @f(%x: tensor<-1xf32>) {\n  return\n}\n")),
    "largest_int64_dimension_is_valid": Case(  # of 1-byte elements: 2**63 - 1 bytes
        _func('  %0 = "ember.neg"(%x) : (tensor<9223372036854775807xi8>) -> '
              "tensor<9223372036854775807xi8>", args="%x: tensor<9223372036854775807xi8>"),
        rc=0),
    "more_bytes_than_int64_counts": Case(
        _func('  %0 = "ember.neg"(%x) : (tensor<9223372036854775807xf32>) -> '
              "tensor<9223372036854775807xf32>", args="%x: tensor<9223372036854775807xf32>"),
        stderr="'ember.neg' op shape [9223372036854775807] of float32 is too large"),
    "unknown_element_type": Case(_b("func.func @f(%x: tensor<4xfoo>) {\n  return\n}\n")),
    "non_ember_element_type": Case(
        _func('  %0 = "ember.neg"(%x) : (tensor<4xi7>) -> tensor<4xi7>', args="%x: tensor<4xi7>"),
        stderr="element type i7 is not an ember dtype"),
    "unknown_ember_type": Case(_b("func.func @f(%x: !ember.unknown) {\n  return\n}\n")),
    "resource_without_parameter": Case(_b("func.func @f(%r: !ember.resource<>) {\n  return\n}\n"),
                                       stderr="expected 1 type arguments"),
    "resource_with_two_parameters": Case(
        _b("func.func @f(%r: !ember.resource<tensor<2xf32>, tensor<3xf32>>) {\n  return\n}\n"),
        stderr="expected 1 type arguments"),
    # -- ops and dialects -----------------------------------------------------------------
    "unknown_dialect": Case(b'"mystery.op"() : () -> ()\n', stderr="unregistered dialect"),
    "unknown_dialect_allowed": Case(b'"mystery.op"() : () -> ()\n',
                                    args=("--allow-unregistered-dialect",), rc=0),
    "unknown_ember_op": Case(_func(NEG.replace("ember.neg", "ember.nonexistent")),
                             stderr="unregistered operation 'ember.nonexistent'"),
    "ember_op_with_a_region": Case(
        _func('  %0 = "ember.neg"(%x) ({ }) : (tensor<4xf32>) -> tensor<4xf32>'),
        stderr="unexpected number of regions"),
    "wrong_operand_count": Case(
        _func('  %0 = "ember.neg"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>'),
        stderr="expects exactly 1 operands"),
    "symbol_redefinition": Case(b"func.func @f() {\n  return\n}\nfunc.func @f() {\n  return\n}\n",
                                stderr="redefinition of symbol named 'f'"),
    # -- attributes -----------------------------------------------------------------------
    "attribute_syntax_error": Case(_func('  %0 = "ember.transpose"(%x) {perm = array<i64: x>} : '
                                         "(tensor<4xf32>) -> tensor<4xf32>")),
    "attribute_of_wrong_kind": Case(
        _func('  %0 = "ember.argmax"(%x) {axis = 0 : i64, dtype = "i64"} : (tensor<4xf32>) -> '
              "tensor<i64>"), stderr="expected base attribute 'builtin.type'"),
    "integer_attribute_out_of_range": Case(
        _func('  %0 = "ember.argmax"(%x) {axis = 99999999999999999999999 : i64, dtype = i64} : '
              "(tensor<4xf32>) -> tensor<i64>"), stderr="integer constant out of range"),
    "duplicate_attribute": Case(
        _func('  %0 = "ember.argmax"(%x) {axis = 0 : i64, axis = 0 : i64, dtype = i64} : '
              "(tensor<4xf32>) -> tensor<i64>"), stderr="duplicate key 'axis'"),
    "dense_literal_wrong_element_count": Case(
        _constant("dense<[1.0, 2.0, 3.0]> : tensor<2xf32>", "tensor<2xf32>"),
        stderr="does not match type"),
    "dense_literal_bad_hex": Case(_constant('dense<"0xZZ"> : tensor<2xf32>', "tensor<2xf32>"),
                                  stderr="hex"),
    "invalid_location": Case(b"func.func @f() loc(bogus) {\n  return\n}\n",
                             stderr="expected location instance"),
    # -- edge cases the ember verifier once mishandled (regression tests) ---------------------
    "huge_splat_constant": Case(
        _constant("dense<1.0> : tensor<1000000000000000xf32>", "tensor<1000000000000000xf32>"),
        rc=0),
    "range_with_infinite_limit": Case(
        _func("\n".join(
            [f'  %{n} = "ember.constant"() {{value = dense<{v}> : tensor<f32>}} : () -> tensor<f32>'
             for n, v in (("s", "0.0"), ("l", "0x7F800000"), ("d", "1.0"))]
            + ['  %r = "ember.range"(%s, %l, %d) : (tensor<f32>, tensor<f32>, tensor<f32>) -> '
               "tensor<?xf32>"]), args=""),
        stderr="ember.range"),
    "squeeze_of_a_scalar": Case(
        _func('  %0 = "ember.squeeze"(%x) {axes = array<i64: 0>} : (tensor<f32>) -> tensor<f32>',
              args="%x: tensor<f32>"),
        stderr="ember.squeeze"),
    "reshape_whose_element_count_overflows_int64": Case(
        _func('  %0 = "ember.reshape"(%x) {shape = array<i64: 4294967296, 4294967296>} : '
              "(tensor<0xf32>) -> tensor<?x?xf32>", args="%x: tensor<0xf32>"),
        stderr="cannot reshape"),
    "bf16_nan_constant": Case(
        _constant("dense<[0x7FC0, 1.0]> : tensor<2xbf16>", "tensor<2xbf16>"), rc=0),
    "empty_bf16_constant": Case(_constant("dense<> : tensor<0xbf16>", "tensor<0xbf16>"), rc=0),
    "empty_string_constant": Case(
        _constant("dense<> : tensor<0x!ember.string>", "tensor<0x!ember.string>"), rc=0),
    # -- nesting deep enough to overflow MLIR's recursive parser or the Python verifier ---
    "deeply_nested_regions": Case(_nested_regions(5000), stderr="nest"),
    "nested_regions_past_python_recursion_limit": Case(_nested_regions(1200), stderr="nest"),
    "deeply_nested_array_attribute": Case(_nested_arrays(20000), stderr="nest"),
    "deeply_nested_tuple_type": Case(_nested_tuples(20000), stderr="nest"),
    "moderately_nested_regions_are_fine": Case(_nested_regions(200), rc=0),
    "brackets_in_strings_and_comments_do_not_nest": Case(
        _b("// " + "(" * 2000 + "\n")
        + _constant('dense<"' + "[{<" * 2000 + '"> : tensor<!ember.string>',
                    "tensor<!ember.string>"),
        rc=0),
    # -- inputs that trip an assertion in MLIR's parser (refused before it sees them) ------
    "dense_array_of_index": Case(b"module attributes {a = array<index>} {}\n",
                                 stderr="1:24: error: dense arrays hold integers or floats"),
    "dense_array_of_index_with_values": Case(
        _func('  %0 = "ember.transpose"(%x) {perm = array<index: 0>} : '
              "(tensor<4xf32>) -> tensor<4xf32>"), stderr="error: dense arrays hold"),
    "dense_array_of_other_non_numbers_is_a_parse_error": Case(
        b"module attributes {a = array<tensor<2xf32>>} {}\n",
        stderr="expected integer or float type"),
    "dense_literal_whose_element_count_overflows_int64": Case(
        _constant("dense<1.0> : tensor<3074457345618258603x3xf32>",
                  "tensor<3074457345618258603x3xf32>"),
        stderr="a shape of 9223372036854775809 elements overflows int64"),
    "argument_whose_element_count_overflows_int64": Case(
        _b("func.func @f(%x: memref<9223372036854775807x2xf32>) {\n  return\n}\n"),
        stderr="1:18: error: a shape of 18446744073709551614 elements"),
    "element_count_at_the_int64_limit_is_valid": Case(
        _b("func.func private @f(tensor<3x3074457345618258602xf32>)\n"), rc=0),
    # -- strings whose escapes are not UTF-8 (every Python read of them raised) -------------
    "string_attribute_escape_not_utf8": Case(
        _func('  "ember.print"(%x) {end = "\\FF\\FE", format = "{}", stream = "stdout", summarize = 3 : i64} : '
              "(tensor<4xf32>) -> ()"), stderr="2:28: error: string literal is not valid UTF-8"),
    "symbol_name_escape_not_utf8": Case(_b('func.func @"\\C3"() {\n  return\n}\n'),
                                        stderr="1:12: error: string literal"),
    "string_escapes_that_are_utf8_are_fine": Case(
        _func('  "ember.print"(%x) {end = "\\C3\\A9\\0A", format = "{}", stream = "stdout", summarize = 3 : i64}'
              " : (tensor<4xf32>) -> ()"), rc=0),
    # -- lowering and passes on shapes they once crashed or hung on ------------------------
    "unranked_result_through_the_lowering": Case(
        _b("func.func @f(%x: tensor<4xf32>) -> tensor<*xf32> {\n"
           '  %0 = "ember.neg"(%x) : (tensor<4xf32>) -> tensor<*xf32>\n'
           "  return %0 : tensor<*xf32>\n}\n"), args=("-p", "convert-ember-to-linalg"),
        stderr="2:8: error: cannot lower 'ember.neg': result #0 of type tensor<*xf32> is "
               "unranked; lowering needs ranked types: run ember-shape-refine first"),
    "chain_of_3000_ops_through_the_lowering": Case(
        _chain(3000), args=("-p", "ember-optimize,convert-ember-to-linalg"), rc=0),
    "chain_of_100000_ops": Case(_chain(100000), rc=0),
    "nested_ifs_through_the_optimizer": Case(_nested_ifs(60), args=("-p", "ember-optimize"),
                                             rc=0),
    "string_tensor_through_upstream_bufferization": Case(
        _b("func.func @f(%s: tensor<!ember.string>) -> tensor<!ember.string> {\n"
           "  return %s : tensor<!ember.string>\n}\n"),
        args=("-p", "one-shot-bufferize{bufferize-function-boundaries}"),
        stderr="1:1: error: 'func.func' has a value of type tensor<!ember.string>"),
    "note_that_prints_a_huge_function_is_shortened": Case(
        _b("func.func @f(%v0: tensor<4xf32>) -> tensor<4xf32> {\n  return %v0 : tensor<4xf32>\n}\n")
        + _chain(500), stderr="more lines)"),
    # -- command line: files, pipelines, passes -----------------------------------------
    "input_file_does_not_exist": Case(None, stderr="cannot read"),
    "input_is_a_directory": Case(b"", input="{dir}", stderr="cannot read"),
    "output_file_in_missing_directory": Case(VALID, args=("-o", "{dir}/missing/out.mlir"),
                                             stderr="cannot write"),
    "invalid_pipeline": Case(VALID, args=("-p", "no-such-pass"),
                             stderr="unknown pass 'no-such-pass'"),
    "pipeline_with_unbalanced_parentheses": Case(VALID, args=("-p", "builtin.module(cse"),
                                                 stderr="invalid pass pipeline"),
    "pipeline_with_unknown_option": Case(VALID, args=("-p", "canonicalize{bogus=1}"),
                                         stderr="invalid pass pipeline"),
    "pipeline_with_a_stray_paren_names_where": Case(
        VALID, args=("-p", "builtin.module(ember-cse))"),
        stderr="unbalanced ')' at offset 9 of 'ember-cse)' in pipeline"),
    "nest_under_an_op_mlir_does_not_know": Case(VALID, args=("-p", "builtin.func(cse)"),
                                                stderr="is no operation MLIR knows"),
    "pass_that_fails": Case(VALID, args=("-p", "one-shot-bufferize"),
                            stderr="op was not bufferized"),
    "print_ir_after_all_with_a_failing_pass": Case(
        VALID, args=("-p", "builtin.module(cse,one-shot-bufferize)", "--print-ir-after-all"),
        stderr="op was not bufferized"),
    # -- split files and diagnostics checking -----------------------------------------------
    "split_file_of_only_markers": Case(b"// -----\n// -----\n", args=("--split-input-file",),
                                       rc=0),
    "split_file_with_one_bad_chunk": Case(
        VALID + b"// -----\nfunc.func @g( {\n// -----\n" + VALID, args=("--split-input-file",),
        stderr="input.mlir:6:14: error:"),
    "expected_error_not_produced": Case(b"// expected-error @+1 {{never}}\n" + VALID,
                                        args=("--verify-diagnostics",), stderr="was not produced"),
    "expected_error_past_end_of_file": Case(b"// expected-error @+100 {{never}}\n" + VALID,
                                            args=("--verify-diagnostics",),
                                            stderr="was not produced"),
    # mlir-opt's designators: @above/@below were once silently ignored, so such a test passed
    "expected_error_below_not_produced": Case(b"// expected-error @below {{never}}\n" + VALID,
                                              args=("--verify-diagnostics",),
                                              stderr="input.mlir:2: error: expected error"),
    "expected_error_above_not_produced": Case(
        _func(NEG + "\n  // expected-error @above {{never}}"), args=("--verify-diagnostics",),
        stderr="input.mlir:2: error: expected error \"never\" was not produced"),
    "expected_error_above_produced": Case(
        _func('  %0 = "ember.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>\n'
              "  // expected-error @above {{ember.exp}}", args="%x: tensor<4xi32>"),
        args=("--verify-diagnostics",), rc=0),
    "unknown_designator": Case(b"// expected-error @sideways {{x}}\n" + VALID,
                               args=("--verify-diagnostics",),
                               stderr="unknown designator '@sideways'"),
    "malformed_expectation_is_not_one": Case(
        b"// expected-error @+1 missing braces\n"
        + _func('  %0 = "ember.exp"(%x) : (tensor<4xi32>) -> tensor<4xi32>',
                args="%x: tensor<4xi32>"),
        args=("--verify-diagnostics",), stderr="unexpected error"),
}


def _with_ids():
    out = []
    for name, case in CASES.items():
        if isinstance(case, Case):
            out.append(pytest.param(case, id=name))
        else:  # already a pytest.param (with marks)
            out.append(pytest.param(*case.values, marks=case.marks, id=name))
    return out


def _run(args: list[str], stdin: bytes | None = None) -> subprocess.CompletedProcess:
    return run("ember-opt", args, stdin)


_check = check


@pytest.mark.parametrize("case", _with_ids())
def test_malformed_input_is_reported_not_crashed_on(case: Case, tmp_path):
    if case.text is not None:
        (tmp_path / "input.mlir").write_bytes(case.text)
    args = [a.replace("{dir}", str(tmp_path)) for a in (case.input, *case.args)]
    _check(_run(args), case.rc, case.stderr)


def test_malformed_input_on_stdin_is_reported():
    _check(_run(["-"], stdin=b"func.func @f( {\n"), 1, "<stdin>:1:")


def test_invalid_utf8_on_stdin_is_reported():
    _check(_run(["-"], stdin=b"// \xff\n" + VALID), 1,
           "<stdin>:1:4: error: cannot read the input: not valid UTF-8 (byte 0xFF")


def test_valid_input_on_stdin_prints_the_module():
    result = _run([], stdin=VALID)
    _check(result, 0)
    assert b'"ember.neg"' in result.stdout


def test_help_lists_the_options():
    result = _run(["--help"])
    _check(result, 0)
    text = result.stdout.decode()
    assert text.startswith("usage: ember-opt")
    for option in ("--pass-pipeline", "--split-input-file", "--verify-diagnostics",
                   "--print-ir-after-all", "--mlir-print-op-generic", "-o OUTPUT"):
        assert option in text, f"--help does not mention {option}"


def test_unknown_command_line_option_is_a_usage_error():
    result = _run(["--no-such-flag"])
    assert result.returncode == 2  # argparse's usage-error status
    assert b"unrecognized arguments: --no-such-flag" in result.stderr
    assert b"Traceback" not in result.stderr
