"""The Python loader (ember/aot_loader.py, em.aot.load): loading again an artifact compiled
again into the same folder, argument conversion as a ConcreteFunction does it, reprs."""

import numpy as np
import pytest

import ember as em
from ember import aot_loader


def test_a_library_compiled_again_into_its_folder_loads_anew(tmp_path):
    # dlopen returned the library loaded before from the same path: the new manifest's
    # signatures then differed from the old library's ("do not belong together")
    def once(x):
        return x + 1.0

    def twice(x, y):
        return x * 2.0 + y

    em.aot.compile(once, ["f32[?]"], out_dir=str(tmp_path), name="edit")
    old = em.aot.load(str(tmp_path))
    assert old(np.ones(2, np.float32)).tolist() == [2.0, 2.0]
    em.aot.compile(twice, ["f32[?]", "f32[?]"], out_dir=str(tmp_path), name="edit")
    new = em.aot.load(str(tmp_path))
    assert new(np.ones(2, np.float32), np.ones(2, np.float32)).tolist() == [3.0, 3.0]
    assert aot_loader.load(str(tmp_path)).twice is not None  # the numpy-only loader too
    again = em.aot.load(str(tmp_path))  # the same content: the same library
    assert again._lib is new._lib
    assert again(np.ones(1, np.float32), np.zeros(1, np.float32)).tolist() == [2.0]
    assert old(np.ones(1, np.float32)).tolist() == [2.0]  # the old one still runs
