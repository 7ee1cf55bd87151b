"""Ember's runtime layer."""
