"""One module per pass; each is registered in `ember.passes.registry`."""
