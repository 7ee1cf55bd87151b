"""Out-of-tree passes: --load-pass-plugin, the `ember.passes` entry points and the lit
site-config hook (lit_tests/lit.cfg.py)."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from ember.tools import plugins
from ember.tools.driver import ToolError

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "lit_tests" / "tools" / "Inputs" / "plugin_passes.py"
BIN = pathlib.Path(sys.executable).parent
SOURCE = ('func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n'
          '  return %a : tensor<3xf32>\n}\n')
PASS = textwrap.dedent('''
    import dataclasses
    from typing import ClassVar
    from mlir import ir
    from ember.passes.base import Pass
    from ember.passes.ir_utils import functions

    @dataclasses.dataclass(frozen=True)
    class MarkPass(Pass):
        name: ClassVar[str] = "test-installed-mark"
        def run(self, module, stats):
            for fn in functions(module):
                fn.attributes["installed"] = ir.UnitAttr.get()
''')


def _run(argv, **kwargs):
    return subprocess.run(argv, capture_output=True, text=True, timeout=300, **kwargs)


def test_a_plugin_that_raises_is_one_tool_error(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no such thing')\n")
    with pytest.raises(ToolError, match=r"loading pass plugin '.*broken.py' failed: "
                                        "RuntimeError: no such thing"):
        plugins.load_pass_plugin(str(broken))


def test_entry_point_passes_load_when_a_pipeline_names_them(tmp_path):
    (tmp_path / "markpkg.py").write_text(PASS)
    info = tmp_path / "markpkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: markpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[ember.passes]\ntest-installed-mark = markpkg:MarkPass\n")
    (tmp_path / "in.mlir").write_text(SOURCE)
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    done = _run([str(BIN / "ember-opt"), str(tmp_path / "in.mlir"), "-p",
                 "builtin.module(test-installed-mark)"], env=env)
    assert done.returncode == 0, done.stderr
    assert "attributes {installed}" in done.stdout
    unknown = _run([str(BIN / "ember-opt"), str(tmp_path / "in.mlir"), "-p",
                    "builtin.module(test-installed-mark)"])
    assert unknown.returncode == 1 and "test-installed-mark" in unknown.stderr


@pytest.mark.parametrize("how", ["site-config", "environment"])
def test_an_out_of_tree_lit_suite_runs_ember_opt_with_its_plugin(tmp_path, how):
    suite = tmp_path / "suite"
    suite.mkdir()
    plugin_line = f"config.ember_plugins = [{str(PLUGIN)!r}]\n" if how == "site-config" else ""
    (suite / "lit.site.cfg.py").write_text(
        "import os\n"
        "config.name = 'out-of-tree'\n"
        "config.test_source_root = os.path.dirname(__file__)\n"
        "config.test_exec_root = os.path.join(os.path.dirname(__file__), 'out')\n"
        f"{plugin_line}"
        f"lit_config.load_config(config, {str(ROOT / 'lit_tests' / 'lit.cfg.py')!r})\n")
    (suite / "rename.mlir").write_text(
        "// RUN: %ember-opt %s -p 'builtin.module(test-plugin-rename{prefix=oot_})' "
        "| FileCheck %s\n// CHECK: func.func @oot_f(\n" + SOURCE)
    env = dict(os.environ)
    if how == "environment":
        env["EMBER_LIT_PLUGINS"] = str(PLUGIN)
    done = _run([str(BIN / "lit"), "-v", str(suite)], env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS: out-of-tree :: rename.mlir" in done.stdout
