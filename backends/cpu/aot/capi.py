"""The C API of an AOT library: `<name>.h`, and the C source that implements it around the
compiled entries (build.py), compiled and linked into the library by link.py.

Per entry `e` of library `lib`, `int lib_e(...)`: its inputs as `const T *x` followed by
`int64_t x_dim<k>` for each `?` dim k of `x`; then its outputs, `T *out<j>` (written,
caller-allocated) for a static shape, `T **out<j>, int64_t *out<j>_shape` for a shape
with `?` dims (allocated by the library: the caller frees it). It returns LIB_OK or an
error code, and `lib_last_error()` is then the message, the JIT's (errors.py).

The C source fills the entry's pointer array (jit.entry_wrapper: buffers, the failure's
value slots, then the `?` dims of the inputs), calls it, and on a failure formats the
message from the error table. It defines the error key the objects declare and creates
it once (`pthread_once`). Variables left as buffers (freeze_variables=False) are arrays of
the library, initialised to their values when compiled (`.incbin` of a file written next
to the source) and set by name.
"""

from __future__ import annotations

import json
from typing import Sequence

from ember.backends.cpu.aot.build import TRACKED, Entry, Extra
from ember.backends.cpu.aot.errors import error_table
from ember.backends.cpu.aot.runtime_c import RUNTIME as _RUNTIME
from ember.backends.cpu.kernels import THREADS_SYMBOL
from ember.backends.cpu.native import KEY_SYMBOL, MAX_VALUES, OUT_OF_MEMORY
from ember.dialects.ember.types import TensorType

# error codes: (suffix, Python class the loader raises), in code order from 0
CODES = (("OK", None), ("OUT_OF_MEMORY", "MemoryError"),
         ("INVALID_ARGUMENT", "InvalidArgumentError"),
         ("ASSERTION_FAILED", "AssertionFailedError"), ("SHAPE", "OpShapeError"),
         ("TYPE", "OpTypeError"), ("ATTRIBUTE", "OpAttributeError"),
         ("RUNTIME", "RuntimeError"), ("BAD_CALL", "ValueError"))
CODE_OF = {cls: k for k, (_, cls) in enumerate(CODES) if cls}

_C_TYPES = {"float32": "float", "float64": "double", "int8": "int8_t", "int16": "int16_t",
            "int32": "int32_t", "int64": "int64_t", "uint8": "uint8_t", "bool": "uint8_t",
            "float16": "uint16_t", "bfloat16": "uint16_t", "complex64": "float",
            "complex128": "double"}
_NOTES = {"bool": " (0 or 1)", "float16": " (IEEE half bits)", "bfloat16": " (bfloat16 bits)",
          "complex64": " (real, imaginary pairs)", "complex128": " (real, imaginary pairs)"}


def c_type(t: TensorType) -> str:
    return _C_TYPES[t.dtype.name]


def c_string(text: str | bytes) -> str:
    """A C string literal of `text` (UTF-8), in pieces of at most 80 characters."""
    data = text.encode() if isinstance(text, str) else text
    pieces, cur = [], ""
    for i, b in enumerate(data):
        ch = chr(b)
        if ch in '"\\?':
            cur += "\\" + ch
        elif 32 <= b < 127:
            cur += ch
        else:
            cur += f"\\{b:03o}"
        if len(cur) >= 80:
            pieces.append(cur)
            cur = ""
    pieces.append(cur)
    return "\n    ".join(f'"{p}"' for p in pieces)


def shape_text(t: TensorType) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in t.shape) + "]"


def signature(entry: Entry, names: Sequence[str], extras: Sequence[Extra],
              c_names: Sequence[str] = ()) -> dict:
    """The entry's signature as the manifest and the library both state it: the inputs
    by their Python names (and C names where these differ)."""
    def spec(t, name=None, c_name=None):
        out = {"dtype": t.dtype.name, "shape": list(t.shape)}
        out = {"name": name, **out} if name else out
        return {**out, "c_name": c_name} if c_name and c_name != name else out
    return {"name": entry.name,
            "inputs": [spec(t, n, c) for t, n, c in
                       zip(entry.inputs, names, list(c_names) or names)],
            "variables": [extras[k].name for k in entry.variables],
            "outputs": [spec(t) for t in entry.results]}


def parameters(lib: str, entry: Entry, names: Sequence[str]) -> list[str]:
    """The C parameters of entry point `lib_<entry>`."""
    params = []
    for t, name in zip(entry.inputs, names):
        params.append(f"const {c_type(t)} *{name}")
        params += [f"int64_t {name}_dim{k}" for k, d in enumerate(t.shape) if d is None]
    for j, t in enumerate(entry.results):
        params += [f"{c_type(t)} *out{j}"] if t.is_static else \
            [f"{c_type(t)} **out{j}", f"int64_t *out{j}_shape"]
    return params


def header(lib: str, entries: Sequence[Entry], names: Sequence[Sequence[str]],
           variables: Sequence[Extra], about: str, gemm: bool = False) -> str:
    guard, up = f"EMBER_AOT_{lib.upper()}_H", lib.upper()
    lines = [f"/* {lib}.h: the C API of lib{lib}.so, {about}.", " *",
             " * Arrays are C-contiguous (row-major) of the element type shown. Inputs are",
             " * only read; a `?` dim of an input is the parameter after its pointer.",
             f" * A NULL array is {up}_BAD_CALL, unless it has no elements.",
             " * An output of static shape is written into a buffer the caller allocates",
             " * (it must not overlap an input). An output with a `?` dim is allocated by",
             f" * the library: *out receives the data, out_shape its dims; the caller owns it",
             f" * and frees it with {lib}_free() (which is free()). On an error the library",
             " * frees every buffer the call allocated (a failing call leaks nothing) and",
             " * the outputs are unspecified.",
             f" * Each entry returns {up}_OK (0) or an error code; {lib}_last_error() is then",
             " * the message, as Ember raises it in Python.",
             " * Thread safety: entries may run concurrently on any threads (each call keeps",
             " * its state on its stack; the error message is per thread). Set variables",
             " * only while no entry runs.", " */",
             f"#ifndef {guard}", f"#define {guard}", "", "#include <stdint.h>", "",
             "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    lines += [f"#define {up}_{suffix} {k}" for k, (suffix, _) in enumerate(CODES)]
    lines.append("")
    for entry, arg_names in zip(entries, names):
        lines += _entry_doc(entry, arg_names, variables)
        lines.append(f"int {lib}_{entry.name}({', '.join(parameters(lib, entry, arg_names))});")
        lines.append("")
    lines += [f"/* The message of this thread's last error (\"\" if none). */",
              f"const char *{lib}_last_error(void);",
              f"/* The name of an error code ({up}_SHAPE -> \"OpShapeError\"). */",
              f"const char *{lib}_error_name(int code);",
              f"/* Frees an output the library allocated. */", f"void {lib}_free(void *data);",
              "/* The entries' signatures as JSON (what em.aot.load checks). */",
              f"const char *{lib}_signature(void);"]
    if gemm:
        lines += ["/* Threads a matrix product may use (0, the default: the CPUs online). */",
                  f"void {lib}_set_gemm_threads(int threads);"]
    if variables:
        lines += ["", "/* Variables, by name, with or without the \":0\" (each initialised to "
                  "its value when compiled):",
                  *[f" *   \"{v.name}\": {v.ttype.dtype.name}{shape_text(v.ttype)}, "
                    f"{v.value.nbytes} bytes" for v in variables],
                  f" * set copies `nbytes` (the variable's size) from `data`; get copies out.",
                  f" * {up}_BAD_CALL for an unknown name or a wrong size. */",
                  f"int {lib}_set_variable(const char *name, const void *data, "
                  "int64_t nbytes);",
                  f"int {lib}_get_variable(const char *name, void *data, int64_t nbytes);"]
    lines += ["", "#ifdef __cplusplus", "}", "#endif", f"#endif  /* {guard} */", ""]
    return "\n".join(lines)


def _entry_doc(entry: Entry, names: Sequence[str], variables: Sequence[Extra]) -> list[str]:
    ins = ", ".join(f"{n}: {t.dtype.name}{shape_text(t)}" for t, n in zip(entry.inputs, names))
    outs = ", ".join(f"{t.dtype.name}{shape_text(t)}" for t in entry.results)
    lines = [f"/* {entry.name}({ins}) -> ({outs})"]
    for t, n in zip(entry.inputs, names):
        lines.append(f" *   {n}: {c_type(t)}{_NOTES.get(t.dtype.name, '')}")
    for j, t in enumerate(entry.results):
        how = "caller-allocated" if t.is_static else "allocated by the library"
        lines.append(f" *   out{j}: {c_type(t)}{_NOTES.get(t.dtype.name, '')}, {how}")
    if entry.variables:
        lines.append(" *   reads variables " + ", ".join(
            f'"{variables[k].name}"' for k in entry.variables))
    lines[-1] += " */"
    return lines


def source(lib: str, entries: Sequence[Entry], names: Sequence[Sequence[str]],
           variables: Sequence[Extra], var_files: Sequence[str], signatures: str,
           gemm: bool = False) -> str:
    """The C source of the library (see the module docstring); with `gemm`, the library
    has Ember's GEMM kernels (kernels/) and `<lib>_set_gemm_threads` sets their threads."""
    up = lib.upper()
    text = _RUNTIME.replace("ember_", f"{lib}_rt_").replace("KEY", KEY_SYMBOL)
    text = text.replace("STATUS_OOM", str(OUT_OF_MEMORY)).replace("CODE_", f"{up}_")
    for name, symbol in TRACKED.items():
        text = text.replace(f"TRACKED_{name.upper()}", symbol)
    lines = [f'#include "{lib}.h"', text]
    for k, (v, path) in enumerate(zip(variables, var_files)):
        lines += _variable_buffer(lib, k, v, path)
    for entry, arg_names in zip(entries, names):
        lines += _entry_source(lib, entry, arg_names)
    lines += [f"const char *{lib}_last_error(void) {{ return {lib}_rt_message; }}",
              f"void {lib}_free(void *data) {{ free(data); }}",
              f"const char *{lib}_signature(void) {{\n  return {c_string(signatures)};\n}}",
              f"const char *{lib}_error_name(int code) {{",
              "  static const char *names[] = {" + ", ".join(
                  c_string(cls or "OK") for _, cls in CODES) + "};",
              f"  return code >= 0 && code < {len(CODES)} ? names[code] : \"unknown\";", "}"]
    if variables:
        lines += _variable_access(lib, variables)
    if gemm:
        lines += [f"extern HIDDEN int32_t {THREADS_SYMBOL};",
                  f"void {lib}_set_gemm_threads(int threads) {{",
                  f"  {THREADS_SYMBOL} = threads > 0 ? threads : 0;", "}"]
    return "\n".join(lines) + "\n"


def _variable_buffer(lib: str, k: int, v: Extra, path: str) -> list[str]:
    name = f"{lib}_rt_var{k}"
    return [f'__asm__(".section .data.{name},\\"aw\\",@progbits\\n.balign 64\\n'
            f'.hidden {name}\\n.type {name}, @object\\n{name}:\\n'
            f'.incbin \\"{path}\\"\\n.size {name}, {v.value.nbytes}\\n.previous");',
            f"extern HIDDEN unsigned char {name}[{max(v.value.nbytes, 1)}];", ""]


def _variable_access(lib: str, variables: Sequence[Extra]) -> list[str]:
    up = lib.upper()
    # each by its tensor name ("scale:0") and the name given to em.Variable ("scale")
    table = ", ".join(f"{{{c_string(v.name)}, {c_string(_plain(v.name))}, {lib}_rt_var{k}, "
                      f"{v.value.nbytes}}}" for k, v in enumerate(variables))
    lines = [f"static const struct {{ const char *name, *plain; unsigned char *data; "
             "int64_t nbytes; }",
             f"  {lib}_rt_vars[] = {{{table}}};"]
    for verb, copy in (("set", "memcpy(v->data, data, (size_t)nbytes)"),
                       ("get", "memcpy(data, v->data, (size_t)nbytes)")):
        const = "const " if verb == "set" else ""
        lines += [f"int {lib}_{verb}_variable(const char *name, {const}void *data, "
                  "int64_t nbytes) {",
                  f"  {lib}_rt_message[0] = 0;",
                  f"  for (size_t i = 0; i < sizeof {lib}_rt_vars / sizeof *{lib}_rt_vars; i++) {{",
                  f"    const __typeof__(*{lib}_rt_vars) *v = &{lib}_rt_vars[i];",
                  "    if (!name || (strcmp(name, v->name) && strcmp(name, v->plain))) "
                  "continue;",
                  "    if (nbytes != v->nbytes || (!data && nbytes))",
                  f"      return {lib}_rt_bad_call(\"{lib}_{verb}_variable: wrong size or "
                  "no data for this variable\");",
                  f"    {copy};", f"    return {up}_OK;", "  }",
                  f"  return {lib}_rt_bad_call(\"{lib}_{verb}_variable: no variable of "
                  "that name\");", "}"]
    return lines


def _plain(name: str) -> str:
    """The name given to em.Variable: its tensor name without the output index."""
    return name[:-2] if name.endswith(":0") else name


def _entry_source(lib: str, entry: Entry, names: Sequence[str]) -> list[str]:
    up, fn = lib.upper(), f"{lib}_{entry.name}"
    args = list(entry.inputs) + [None] * len(entry.variables)
    n = len(args) + len(entry.results)
    dims = [(name, k) for t, name in zip(entry.inputs, names)
            for k, d in enumerate(t.shape) if d is None]
    table = error_table(entry.errors)
    sites = ", ".join(f"{{{status}, {CODE_OF.get(cls, CODE_OF['RuntimeError'])}, "
                      f"{c_string(text)}}}" for status, cls, text in table) or "{0, 0, 0}"
    lines = [f"int {lib}_rt_{entry.wrapper}(void **data) __asm__(\"{entry.wrapper}\");",
             f"int {fn}({', '.join(parameters(lib, entry, names))}) {{",
             f"  static const {lib}_rt_site sites[] = {{{sites}}};",
             f"  void *data[{n + MAX_VALUES + max(len(dims), 1)}] = {{0}};",
             f"  int code = {lib}_rt_begin();", "  if (code) return code;"]
    for name, k in dims:
        lines += [f"  if ({name}_dim{k} < 0)",
                  f"    return {lib}_rt_bad_call(\"{fn}: {name}_dim{k} is negative\");"]
    for t, name in zip(entry.inputs, names):
        if t.shape and None in t.shape:  # sizes computed from it must not overflow
            shape = ", ".join(f"{name}_dim{k}" if d is None else str(d)
                              for k, d in enumerate(t.shape))
            lines += [f"  code = {lib}_rt_check_size({c_string(entry.name)}, "
                      f"{c_string(name)}, (const int64_t[]){{{shape}}}, {len(t.shape)}, "
                      f"{t.dtype.np_dtype.itemsize});",
                      "  if (code) return code;"]
    for i, (t, name) in enumerate(zip(entry.inputs, names)):
        if t.shape is not None and 0 not in t.shape:  # NULL only for no elements
            empty = " || ".join(f"{name}_dim{k} == 0" for k, d in enumerate(t.shape)
                                if d is None)
            lines += [f"  if (!{name}{f' && !({empty})' if empty else ''})",
                      f"    return {lib}_rt_bad_call(\"{fn}: {name} is NULL\");"]
        lines.append(f"  data[{i}] = (void *){name};")
    for k, index in enumerate(entry.variables):
        lines.append(f"  data[{len(entry.inputs) + k}] = {lib}_rt_var{index};")
    dynamic = []
    for j, t in enumerate(entry.results):
        if t.is_static:
            if t.num_elements:
                lines += [f"  if (!out{j})",
                          f"    return {lib}_rt_bad_call(\"{fn}: out{j} is NULL\");"]
            lines.append(f"  data[{len(args) + j}] = out{j};")
        else:
            dynamic.append(j)
            lines.append(f"  if (!out{j} || !out{j}_shape)")
            lines.append(f"    return {lib}_rt_bad_call(\"{fn}: out{j} and out{j}_shape "
                         "must point to where the output goes\");")
            lines.append(f"  *out{j} = 0;")
    for slot, (name, k) in enumerate(dims):
        lines.append(f"  data[{n + MAX_VALUES + slot}] = (void *)(intptr_t){name}_dim{k};")
    lines += [f"  {lib}_rt_track_begin();",
              f"  int32_t status = {lib}_rt_{entry.wrapper}(data);",
              f"  {lib}_rt_track_end(status != 0);",
              "  if (status)",
              f"    return {lib}_rt_fail(status, (const int64_t *)(data + {n}), sites, "
              f"{len(table)}, {c_string(entry.name)});",
              "  int lost = 0;"]
    if dynamic:  # each `?` output's allocation, read before any is taken (ember_take)
        lines.append(f"  void *allocs[{len(dynamic)}];")
        lines += [f"  allocs[{k}] = (void *)(intptr_t)((int64_t *)data[{len(args) + j}])[0];"
                  for k, j in enumerate(dynamic)]
    for k, j in enumerate(dynamic):
        t = entry.results[j]
        lines.append(f"  lost |= {lib}_rt_take(data[{len(args) + j}], {len(t.shape)}, "
                     f"{t.dtype.np_dtype.itemsize}, (void **)out{j}, out{j}_shape, allocs, "
                     f"{k}, {len(dynamic)});")
    if dynamic:
        lines += ["  if (lost) {"] + [f"    free(*out{j}); *out{j} = 0;" for j in dynamic] + [
            f"    snprintf({lib}_rt_message, sizeof {lib}_rt_message, "
            f"\"Unable to allocate an output of @{entry.name}: out of memory\");",
            f"    return {up}_OUT_OF_MEMORY;", "  }"]
    lines += [f"  return {up}_OK;", "}", ""]
    return lines


def signatures_json(sigs: list[dict]) -> str:
    return json.dumps(sigs, sort_keys=True, separators=(",", ":"))
