"""Dialect conversions: `convert-ember-to-linalg`."""
