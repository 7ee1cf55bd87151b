"""`em.keras.utils`: `experimental.DatasetCreator`, fit's input made by a dataset function."""

import types as _types

from ember.runtime.keras.fit import DatasetCreator

experimental = _types.SimpleNamespace(DatasetCreator=DatasetCreator)

__all__ = ["experimental"]
