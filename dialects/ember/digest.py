"""Content digests for what Ember keeps between processes and the names it generates: the
compile cache's keys and checksums, AutoGraph's code cache, the host fingerprints, the
symbols of print and host-call sites. BLAKE2b with a 32-byte digest (64 hex digits).

It comes from CPython's own `_blake2` module: `hashlib` loads OpenSSL and builds its
constructors when it is imported (~11 M instructions, ~3.5 ms here), which `import ember`
and a warm start's first call would pay; `_blake2` costs a twentieth of that. Formats
that promise SHA-256 to others (the AOT manifest, em.transform's artifacts) keep it.
"""

from __future__ import annotations

try:
    from _blake2 import blake2b as _blake2b
except ImportError:  # a Python built without the module: hashlib's is the same function
    from hashlib import blake2b as _blake2b

DIGEST_SIZE = 32
HEX_LENGTH = 2 * DIGEST_SIZE


def hasher():
    """A new digest object (`update(bytes)`, `hexdigest()`)."""
    return _blake2b(digest_size=DIGEST_SIZE)


def hexdigest(data) -> str:
    """The digest of `data` (bytes or a buffer) as 64 hex digits."""
    return _blake2b(data, digest_size=DIGEST_SIZE).hexdigest()
