"""The layers import downward only (DESIGN.md): tools -> ember -> runtime -> backends ->
passes -> dialects, and runtime -> frontend -> dialects.

Every import statement counts, including ones inside functions (a lazy import is still a
dependency: it only hides a cycle).
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# package -> the ember packages its modules must not import
FORBIDDEN = {
    "dialects": ("frontend", "runtime", "backends", "passes", "tools"),
    "passes": ("frontend", "runtime", "backends", "tools"),
    "backends": ("frontend", "runtime", "tools"),
    "frontend": ("runtime", "backends", "passes", "tools"),
}


def _imports(path: pathlib.Path):
    """(line, imported module) for every import in the module at `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module


def _modules(package: str):
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_imports_no_higher_layer(package):
    assert _modules(package), f"no modules found under {package}/"
    bad = []
    for path in _modules(package):
        for line, name in _imports(path):
            parts = name.split(".")
            if parts[0] == "ember" and len(parts) > 1 and parts[1] in FORBIDDEN[package]:
                bad.append(f"{path.relative_to(ROOT)}:{line} imports {name}")
    assert not bad, f"{package}/ must not import {', '.join(FORBIDDEN[package])}:\n" + \
        "\n".join(bad)


def test_the_check_sees_lazy_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from ember.runtime import function\n")
    assert list(_imports(module)) == [(2, "ember.runtime")]


def test_every_package_is_listed_for_installation():
    """pyproject.toml lists the packages by name (the folders are mapped to `ember.*`): a
    new sub-package left out works in the editable install and is missing from a wheel."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    mapped = {folder: name for name, folder in config["package-dir"].items()}
    found = set()
    for folder, name in mapped.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            parts = init.parent.relative_to(ROOT / folder).parts
            found.add(".".join((name,) + parts))
    assert found - listed == set(), "add these to [tool.setuptools] packages"


def test_every_error_and_warning_is_an_ember_one_and_exported():
    """Each exception or warning class defined in the library derives from EmberError or
    EmberWarning and is in em.errors (the command-line tools' ToolError derives from
    EmberError but stays with the tools)."""
    import importlib
    import inspect

    import ember as em
    exported = {getattr(em.errors, name) for name in em.errors.__all__}
    found = {}
    for package in ("dialects", "passes", "backends", "frontend", "runtime"):
        for path in _modules(package):
            parts = path.relative_to(ROOT / package).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            module = importlib.import_module(".".join(("ember", package) + parts))
            for name, obj in vars(module).items():
                if inspect.isclass(obj) and issubclass(obj, BaseException) \
                        and obj.__module__ == module.__name__ and not name.startswith("_"):
                    found[f"{module.__name__}.{name}"] = obj
    assert found, "no error classes found"
    for where, cls in found.items():
        base = em.errors.EmberWarning if issubclass(cls, Warning) else em.errors.EmberError
        assert issubclass(cls, base), f"{where} does not derive from {base.__name__}"
        assert cls in exported, f"{where} is not exported from em.errors"
