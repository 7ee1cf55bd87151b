"""The CPUs an AOT library may be compiled for, and the LLVM features each implies.

The manifest records the target's feature list and the loader refuses a library whose
features this machine lacks (an instruction it lacks would be SIGILL, not an error).
For "host" the features are LLVM's for this machine (`llvm.get_host_cpu_features`). For a
named CPU, llvmlite has no API listing the features LLVM's CPU model implies (only the
host's), so they are this table, transcribed from LLVM's X86.td (the processor feature
lists, ISA extensions only: the ones code generation may use). A name not in the table is
refused with AotError before LLVM sees it: LLVM aborts the process on a 32-bit-only CPU
("64-bit code requested on a subtarget that doesn't support it") and only warns about a
name it does not know.
"""

from __future__ import annotations

from ember.backends.cpu.aot.build import AotError

_BASE = ("64bit", "cmov", "cx8", "fxsr", "mmx", "sse", "sse2")
_V2 = _BASE + ("cx16", "sahf", "popcnt", "crc32", "sse3", "ssse3", "sse4.1", "sse4.2")
_V3 = _V2 + ("avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe", "xsave")
_V4 = _V3 + ("avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "evex512")

_NEHALEM = _V2
_WESTMERE = _NEHALEM + ("aes", "pclmul")
_SANDYBRIDGE = _WESTMERE + ("avx", "xsave", "xsaveopt")
_IVYBRIDGE = _SANDYBRIDGE + ("f16c", "fsgsbase", "rdrnd")
_HASWELL = _IVYBRIDGE + ("avx2", "bmi", "bmi2", "fma", "invpcid", "lzcnt", "movbe")
_BROADWELL = _HASWELL + ("adx", "prfchw", "rdseed")
_SKYLAKE = _BROADWELL + ("clflushopt", "xsavec", "xsaves")
_SKX = _SKYLAKE + ("avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl", "evex512",
                   "clwb", "pku")
_CASCADELAKE = _SKX + ("avx512vnni",)
_COOPERLAKE = _CASCADELAKE + ("avx512bf16",)
_ICELAKE = _SKX + ("avx512vbmi", "avx512ifma", "avx512vbmi2", "avx512bitalg", "avx512vnni",
                   "avx512vpopcntdq", "gfni", "vaes", "vpclmulqdq", "sha", "rdpid")
_ICELAKE_SERVER = _ICELAKE + ("pconfig", "wbnoinvd")
_TIGERLAKE = _ICELAKE + ("avx512vp2intersect", "movdiri", "movdir64b", "shstk")
_SAPPHIRERAPIDS = _ICELAKE_SERVER + (
    "amx-tile", "amx-int8", "amx-bf16", "avx512bf16", "avx512fp16", "avxvnni", "cldemote",
    "enqcmd", "movdiri", "movdir64b", "serialize", "tsxldtrk", "uintr", "waitpkg", "ptwrite")
_GRANITERAPIDS = _SAPPHIRERAPIDS + ("amx-fp16", "prefetchi")
_ALDERLAKE = _SKYLAKE + ("avxvnni", "gfni", "vaes", "vpclmulqdq", "sha", "rdpid", "movdiri",
                         "movdir64b", "serialize", "waitpkg", "ptwrite", "hreset", "shstk",
                         "clwb", "pku", "widekl", "kl", "cldemote", "pconfig")
_ZNVER1 = _BROADWELL + ("clflushopt", "clzero", "mwaitx", "sha", "sse4a", "xsavec",
                        "xsaves")
_ZNVER2 = _ZNVER1 + ("clwb", "rdpid", "wbnoinvd")
_ZNVER3 = _ZNVER2 + ("invpcid", "pku", "vaes", "vpclmulqdq")
_ZNVER4 = _ZNVER3 + ("avx512f", "avx512cd", "avx512dq", "avx512bw", "avx512vl", "evex512",
                     "avx512ifma", "avx512vbmi", "avx512vbmi2", "avx512bitalg",
                     "avx512vnni", "avx512vpopcntdq", "avx512bf16", "gfni", "shstk")
_ZNVER5 = _ZNVER4 + ("avxvnni", "movdiri", "movdir64b", "avx512vp2intersect", "prefetchi")

FEATURES = {
    "x86-64": _BASE, "x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4,
    "nehalem": _NEHALEM, "westmere": _WESTMERE, "sandybridge": _SANDYBRIDGE,
    "ivybridge": _IVYBRIDGE, "haswell": _HASWELL, "broadwell": _BROADWELL,
    "skylake": _SKYLAKE, "skylake-avx512": _SKX, "cascadelake": _CASCADELAKE,
    "cooperlake": _COOPERLAKE, "icelake-client": _ICELAKE, "icelake-server": _ICELAKE_SERVER,
    "tigerlake": _TIGERLAKE, "sapphirerapids": _SAPPHIRERAPIDS,
    "emeraldrapids": _SAPPHIRERAPIDS, "graniterapids": _GRANITERAPIDS,
    "alderlake": _ALDERLAKE, "raptorlake": _ALDERLAKE, "meteorlake": _ALDERLAKE,
    "znver1": _ZNVER1, "znver2": _ZNVER2, "znver3": _ZNVER3, "znver4": _ZNVER4,
    "znver5": _ZNVER5,
}


def named_cpu_features(cpu) -> str:
    """LLVM's feature string ("+avx,+avx2,...") for the named x86-64 CPU `cpu`; AotError
    for a name that is not in the table (a 32-bit-only CPU, a typo, another architecture)."""
    if not isinstance(cpu, str) or cpu not in FEATURES:
        hint = ""
        if isinstance(cpu, str) and (cpu in ("i386", "i486", "i586", "i686") or
                                     cpu.startswith(("pentium", "athlon", "k6", "k8"))):
            hint = f" ({cpu} is a 32-bit or pre-x86-64 CPU: the library is x86-64 code)"
        raise AotError(f"target_cpu {cpu!r} is not an x86-64 CPU Ember knows{hint}: use "
                       f"\"host\" or one of {', '.join(FEATURES)}")
    return ",".join("+" + f for f in dict.fromkeys(FEATURES[cpu]))


def enabled(features: str) -> list[str]:
    """The features a feature string turns on (`+name`), in order."""
    return [f[1:] for f in features.split(",") if f.startswith("+")]
