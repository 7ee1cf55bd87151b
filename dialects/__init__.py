"""MLIR dialects defined by Ember (`ember.dialects.ember`) and the context that loads them."""
