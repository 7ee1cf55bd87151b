"""Out-of-tree passes: `--load-pass-plugin=FILE.py` and the `ember.passes` entry points.

    ember-opt in.mlir --load-pass-plugin=my_passes.py -p 'builtin.module(my-pass)'

A plugin is a Python file whose `@register_pass` classes register when it is imported;
ember-opt imports each `--load-pass-plugin` file (repeatable, in order) before parsing the
pipeline, as mlir-opt's `--load-pass-plugin` loads a shared library that registers its
passes. Installed packages offer passes through the `ember.passes` entry-point group,
one entry per pass, named as the pass:

    [project.entry-points."ember.passes"]
    my-pass = "my_package.passes:MyPass"

Those load when a pipeline names a pass Ember does not know (registry.from_entry_point,
called by the pipeline parser), so `em.function(pipeline="my-pass")` finds them too.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import sys
from types import ModuleType

from ember.tools.driver import ToolError

def module_name(path: str) -> str:
    """The module name a plugin file is imported under (one per absolute path)."""
    full = os.path.abspath(path)
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(full))[0])
    return f"ember_plugin_{stem}_{hashlib.sha1(full.encode()).hexdigest()[:8]}"


def load_pass_plugin(path: str) -> ModuleType:
    """Imports plugin file `path` once (its `@register_pass` classes register); ToolError
    saying what went wrong if it is missing or raises."""
    if not path.endswith(".py"):
        raise ToolError(f"pass plugin '{path}' is not a Python file (.py); Ember's plugins "
                        "are Python modules whose @register_pass classes register on import")
    if not os.path.isfile(path):
        raise ToolError(f"pass plugin '{path}' does not exist")
    name = module_name(path)
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - any error in the plugin is the plugin's
        del sys.modules[name]
        raise ToolError(f"loading pass plugin '{path}' failed: {type(e).__name__}: {e}") \
            from None
    return module

