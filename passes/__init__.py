"""Ember's passes layer."""
