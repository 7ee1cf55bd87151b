"""The folder layout maps onto the `ember` package in a built wheel, not only in -e installs."""

import subprocess
import sys
import zipfile

import pytest


@pytest.mark.slow
def test_built_wheel_contains_and_imports_every_layer(tmp_path):
    root = __import__("pathlib").Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w",
                    str(tmp_path), str(root)], check=True, capture_output=True)
    wheel = next(tmp_path.glob("ember-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for path in ("ember/__init__.py", "ember/dialects/ember/base.py",
                 "ember/frontend/tensor.py", "ember/tools/ember_opt.py"):
        assert path in names, f"{path} missing from {wheel.name}"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = ("import ember as em, ember.tools.ember_opt; "
             "print(em.__file__); print(em.add(em.constant([1]), 1).numpy()[0])")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, env={"PYTHONPATH": str(site), "PATH": ""})
    assert done.returncode == 0, done.stderr
    where, value = done.stdout.split()
    assert where.startswith(str(site)) and value == "2"
