"""Fixtures the backend tests share."""

import pytest


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty disk cache in `tmp_path` (enabled), empty memory caches, and the host's
    target read afresh: as a new process with a new EMBER_CACHE_DIR sees them."""
    from ember.backends.cpu import cache, compiler, host_target
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("EMBER_CACHE_DISABLE", raising=False)
    monkeypatch.setattr(cache, "memory_cache", cache.MemoryCache())
    monkeypatch.setattr(compiler, "memory_cache", cache.memory_cache)
    host_target.host.cache_clear()
    yield tmp_path
    host_target.host.cache_clear()
