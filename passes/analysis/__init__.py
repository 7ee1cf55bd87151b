"""Analyses that passes, lowerings and backends share (what an op may do)."""
