"""Ember's frontend layer."""
