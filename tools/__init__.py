"""Ember's tools layer."""
