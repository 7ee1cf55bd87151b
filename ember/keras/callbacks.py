"""`em.keras.callbacks`: `Callback` (the hooks fit calls) and `History` (what fit returns)."""

from ember.runtime.keras.fit import Callback, History

__all__ = ["Callback", "History"]
