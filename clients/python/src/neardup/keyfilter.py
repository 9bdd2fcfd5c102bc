"""The service's key filter (``GET /v1/prescreen``), read and queried in pure Python.

The filter is a Bloom filter written by the Go package ``neardup`` (``KeyFilter``): an
``NDKEYFLT`` snapshot framed by ``internal/snapfile`` (magic, version, header, body,
CRC-32C), whose body is bits-and-blooms/bloom's binary form (``m``, ``k``, then the
bit set's 64-bit words, big-endian). A key's bit positions combine four 64-bit base
hashes by bits-and-blooms' double hashing (``location``). In version 2 snapshots the
base hashes are the four little-endian words of the key's SHA-256 (``hashlib``, at C
speed); in version 1 they are bits-and-blooms' MurmurHash3 ``sum256``, reproduced here
in pure Python, about ten times slower. ``client/prescreen/testdata/vectors.json``,
written by a Go test, pins the agreement for both.

A URL key is the byte ``u`` followed by the canonical URL; an exact-content key is the
byte ``x`` followed by the 32-byte main-text hash.
"""

from __future__ import annotations

import struct
import sys
from array import array
from typing import Final

try:
    # CPython's own SHA-256 (the module hashlib falls back on) hashes a URL-sized key
    # about twice as fast as hashlib's OpenSSL one, whose per-call setup dominates at
    # that size. The digests are the same; a build without it uses hashlib's.
    from _sha2 import sha256 as _sha256  # Python 3.12 and later
except ImportError:
    try:
        from _sha256 import sha256 as _sha256
    except ImportError:
        from hashlib import sha256 as _sha256

__all__ = ["FilterError", "KeyFilter", "murmur_base_hashes"]

_MAGIC: Final = b"NDKEYFLT"
_VERSIONS: Final = (1, 2)
# The same bounds as the Go reader: 2^34 bits at most, and at most 64 hash functions.
_MAX_FILTER_BYTES: Final = 1 << 31
_MAX_HASHES: Final = 64

_M64: Final = 0xFFFFFFFFFFFFFFFF
_C1: Final = 0x87C37B91114253D5
_C2: Final = 0x4CF5AD432745937F


class FilterError(ValueError):
    """A key filter snapshot that is malformed, truncated or corrupted."""


def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_CRC_TABLE: Final = _crc32c_table()


def crc32c(data: bytes) -> int:
    """Return the CRC-32C (Castagnoli) of data; about 0.1 s a megabyte."""
    crc = 0xFFFFFFFF
    t = _CRC_TABLE
    for b in data:
        crc = t[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _fmix(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    return k ^ (k >> 33)


def _finish(h1: int, h2: int, k1: int, k2: int, length: int) -> tuple[int, int]:
    # The tail words k1, k2 (0 for none) are mixed only when they hold a byte; a zero
    # word mixes to zero, so mixing it always is the same.
    if k2:
        k2 = (k2 * _C2) & _M64
        k2 = ((k2 << 33) | (k2 >> 31)) & _M64
        h2 ^= (k2 * _C1) & _M64
    if k1:
        k1 = (k1 * _C1) & _M64
        k1 = ((k1 << 31) | (k1 >> 33)) & _M64
        h1 ^= (k1 * _C2) & _M64
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h1 = _fmix(h1)
    h2 = _fmix(h2)
    h1 = (h1 + h2) & _M64
    return h1, (h2 + h1) & _M64


def _mix(h1: int, h2: int, k1: int, k2: int) -> tuple[int, int]:
    k1 = (k1 * _C1) & _M64
    k1 = ((k1 << 31) | (k1 >> 33)) & _M64
    h1 ^= (k1 * _C2) & _M64
    h1 = ((h1 << 27) | (h1 >> 37)) & _M64
    h1 = ((h1 + h2) * 5 + 0x52DCE729) & _M64
    k2 = (k2 * _C2) & _M64
    k2 = ((k2 << 33) | (k2 >> 31)) & _M64
    h2 ^= (k2 * _C1) & _M64
    h2 = ((h2 << 31) | (h2 >> 33)) & _M64
    h2 = ((h2 + h1) * 5 + 0x38495AB5) & _M64
    return h1, h2


_unpack_blocks = struct.Struct("<QQ").iter_unpack
_unpack_sha = struct.Struct("<QQQQ").unpack


def murmur_base_hashes(data: bytes) -> tuple[int, int, int, int]:
    """Return bits-and-blooms/bloom's four base hashes of data.

    They are MurmurHash3 x64 128 of data (two words), then of data with the byte 1
    appended (two more): the library's ``sum256``.
    """
    n = len(data)
    full = n - (n & 15)
    h1 = h2 = 0
    if full:
        for k1, k2 in _unpack_blocks(data[:full]):
            h1, h2 = _mix(h1, h2, k1, k2)
    tail = data[full:]
    t = int.from_bytes(tail, "little")
    a, b = _finish(h1, h2, t & _M64, t >> 64, n)
    if len(tail) == 15:
        # The appended 1 completes a block: mix it, then finish with an empty tail.
        t |= 1 << 120
        h1, h2 = _mix(h1, h2, t & _M64, t >> 64)
        c, d = _finish(h1, h2, 0, 0, n + 1)
    else:
        t |= 1 << (8 * len(tail))
        c, d = _finish(h1, h2, t & _M64, t >> 64, n + 1)
    return a, b, c, d


class KeyFilter:
    """A read-only copy of the service's key filter.

    ``has_url(canonical)`` and ``has_exact(hash)`` answer False when the key was
    certainly not in the filter, True when it may have been. A KeyFilter is immutable
    once read, so threads may share it. A lookup costs one SHA-256 of the key (a
    pure-Python MurmurHash3 for a version 1 snapshot) and up to ``k`` bit tests: a few
    microseconds in CPython, most of it the hash.
    """

    __slots__ = ("_bits", "_m", "_k", "_murmur", "capacity", "rate", "count", "size")

    def __init__(
        self, bits: bytes, m: int, k: int, capacity: int, rate: float, count: int, size: int, murmur: bool = False
    ) -> None:
        self._bits = bits
        self._murmur = murmur
        self._m = m
        self._k = k
        self.capacity = capacity
        """The number of keys the filter was sized for."""
        self.rate = rate
        """The false-positive rate it was sized for."""
        self.count = count
        """The number of keys added (a key added twice counts twice)."""
        self.size = size
        """The snapshot's size in bytes."""

    @property
    def m(self) -> int:
        """The filter's number of bits."""
        return self._m

    @property
    def k(self) -> int:
        """The filter's number of hash functions."""
        return self._k

    @classmethod
    def from_bytes(cls, data: bytes, verify: bool = True) -> "KeyFilter":
        """Read a snapshot as ``GET /v1/prescreen`` sends it.

        Raises FilterError for a malformed, truncated or corrupted snapshot. With
        verify (the default) the CRC-32C is checked, which costs about 0.1 s a
        megabyte in pure Python; HTTP over TCP already checksums what it carries.
        """
        if len(data) < 12 + 32 + 4:
            raise FilterError(f"neardup: key filter: {len(data)} bytes is too short for a snapshot")
        if data[:8] != _MAGIC:
            raise FilterError("neardup: key filter: not a key filter snapshot (bad magic)")
        (version,) = struct.unpack_from("<I", data, 8)
        if version not in _VERSIONS:
            raise FilterError(f"neardup: key filter: version {version}; this client reads versions 1 and 2: upgrade it")
        n, rate_bits, count, size = struct.unpack_from("<QQQQ", data, 12)
        (rate,) = struct.unpack("<d", struct.pack("<Q", rate_bits))
        if n < 1 or not (0 < rate < 1) or size > _MAX_FILTER_BYTES:
            raise FilterError(f"neardup: key filter: header n={n} rate={rate} size={size}")
        if len(data) != 44 + size + 4:
            raise FilterError(f"neardup: key filter: {len(data)} bytes for a body of {size}")
        if verify:
            (want,) = struct.unpack_from("<I", data, 44 + size)
            if crc32c(data[: 44 + size]) != want:
                raise FilterError("neardup: key filter: checksum mismatch")
        body = data[44 : 44 + size]
        if size < 24:
            raise FilterError("neardup: key filter: bloom filter body too short")
        m, k, length = struct.unpack_from(">QQQ", body, 0)
        words = (length + 63) // 64
        if len(body) != 24 + 8 * words:
            raise FilterError(f"neardup: key filter: bit set of {length} bits in {len(body) - 24} bytes")
        if k == 0 or k > _MAX_HASHES or m == 0 or m > 8 * size or m > length:
            raise FilterError(f"neardup: key filter: bloom filter with m={m} bits and k={k} in {size} bytes")
        # Store the words little-endian, so that bit i is bit i&7 of byte i>>3.
        w = array("Q")
        w.frombytes(body[24:])
        if sys.byteorder == "little":
            w.byteswap()
        return cls(w.tobytes(), m, k, n, rate, count, len(data), murmur=version == 1)

    def has_key(self, key: bytes) -> bool:
        """Report whether key (its kind's prefix byte included) may have been added."""
        if self._murmur:
            h0, h1, h2, h3 = murmur_base_hashes(key)
        else:
            h0, h1, h2, h3 = _unpack_sha(_sha256(key).digest())
        m = self._m
        bits = self._bits
        # location(i) = h[i%2] + i*h[2+(((i+(i%2))%4)/2)], taken mod 2^64 then mod m.
        # Location 0 is h0 (already below 2^64); a key that is not in a filter of
        # normal fill fails there, so it is tested before the loop starts.
        loc = h0 % m
        if not (bits[loc >> 3] >> (loc & 7)) & 1:
            return False
        for i in range(1, self._k):
            if i & 1:
                loc = ((h1 + i * (h3 if (i + 1) & 3 else h2)) & _M64) % m
            else:
                loc = ((h0 + i * (h3 if i & 3 else h2)) & _M64) % m
            if not (bits[loc >> 3] >> (loc & 7)) & 1:
                return False
        return True

    def has_url(self, canonical: str) -> bool:
        """Report whether the canonical URL may have been added; False is certain."""
        return self.has_key(b"u" + canonical.encode("utf-8", "surrogateescape"))

    def has_exact(self, main_hash: bytes) -> bool:
        """Report whether the 32-byte main-text hash may have been added."""
        if len(main_hash) != 32:
            raise ValueError("neardup: key filter: a main-text hash has 32 bytes")
        return self.has_key(b"x" + main_hash)
