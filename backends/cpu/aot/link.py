"""Linking an AOT library: the entries' objects and the C API's source, `cc -shared`.

The system's C compiler (`$CC`, else `cc`) compiles the C source and links: position-
independent, `-z defs` (a symbol nothing defines is a link error here, not a failed
dlopen later), libgcc static (so no libgcc_s), and a version script that exports only the
C API (`<lib>_*`): the entries' internals and the error key stay local, so two libraries
in one process do not see each other's symbols.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Sequence

from ember.backends.cpu.aot.build import AotError

CC_ENV = "CC"


def compiler() -> str:
    """The C compiler to use: `$CC`, else `cc`; AotError if there is none."""
    name = os.environ.get(CC_ENV) or "cc"
    found = shutil.which(name)
    if found is None:
        raise AotError(f"no C compiler: '{name}' is not on PATH (AOT libraries are linked "
                       "with the system's C compiler; install gcc or clang, or set $CC)")
    return found


def link(out: str, source: str, objects: Sequence[bytes], workdir: str,
         exports: Sequence[str]) -> list[str]:
    """Writes `source` and `objects` to `workdir` and links them into the shared library
    `out`; returns the command run. AotError with the compiler's output if it fails."""
    c_file = os.path.join(workdir, "api.c")
    with open(c_file, "w") as f:
        f.write(source)
    paths = []
    for k, obj in enumerate(objects):
        paths.append(os.path.join(workdir, f"entry{k}.o"))
        with open(paths[-1], "wb") as f:
            f.write(obj)
    script = os.path.join(workdir, "exports.map")
    with open(script, "w") as f:
        f.write("{\n  global:\n" + "".join(f"    {name};\n" for name in exports) +
                "  local: *;\n};\n")
    out = os.path.abspath(out)  # cc runs in `workdir`: a relative path would land there
    command = [compiler(), "-shared", "-fPIC", "-O2", "-std=gnu11", "-o", out, c_file,
               *paths, f"-Wl,--version-script={script}", "-Wl,-z,defs",
               "-Wl,-z,noexecstack", "-static-libgcc", "-lm", "-lpthread"]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True)
    if done.returncode != 0:
        raise AotError(f"linking {os.path.basename(out)} failed ({' '.join(command)}):\n"
                       f"{done.stderr.strip()}")
    return command
