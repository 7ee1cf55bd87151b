"""`em.keras.callbacks`: `Callback` (the hooks fit calls), `History` (what fit returns),
`EarlyStopping` and `LearningRateScheduler`."""

from ember.runtime.keras.callbacks import EarlyStopping, LearningRateScheduler
from ember.runtime.keras.callback_base import Callback, History

__all__ = ["Callback", "EarlyStopping", "History", "LearningRateScheduler"]
