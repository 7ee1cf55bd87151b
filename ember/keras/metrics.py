"""`em.keras.metrics`: `Mean`, the running mean a custom training loop reports (the code is
in `ember.frontend.training.layers_extra`; this module only re-exports)."""

from ember.frontend.training.layers_extra import Mean

__all__ = ["Mean"]
