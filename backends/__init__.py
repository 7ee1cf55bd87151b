"""Ember's backends layer."""
