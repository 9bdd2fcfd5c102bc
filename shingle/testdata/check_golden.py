#!/usr/bin/env python3
"""Checks the ASCII cases of golden.json against an independent implementation.

For ASCII text without apostrophes the default pipeline is: lower-case, words are runs of
[a-z0-9], and the units are the words (or the characters of the words joined by single
spaces). Each unit is hashed as unit_hash below states; a shingle of K units (or of all of them,
if fewer) starts from the seed, XORs in each unit hash and multiplies by 0x9e3779b97f4a7c15
modulo 2^64, and ends with the splitmix64 finalizer. The features are then sampled, then
made distinct and sorted (sets).
Needs only the standard library. Run from the shingle folder:
    python3 testdata/check_golden.py
"""
import json
import re
import sys

golden = json.load(open("testdata/golden.json"))


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def shingles(units, k):
    if 0 < len(units) < k:
        return [units]
    return [units[i:i + k] for i in range(len(units) - k + 1)]


def char_shingles(text, k):
    return shingles(list(" ".join(words(text))), k)


M = (1 << 64) - 1


def splitmix64(x):
    x ^= x >> 30
    x = (x * 0xbf58476d1ce4e5b9) & M
    x ^= x >> 27
    x = (x * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)


def mum(x, y):
    p = x * y
    return (p >> 64) ^ (p & M)


def unit_hash(u):
    """Short units (< 8 bytes): splitmix64 of the bytes, little-endian, with the length
    in the top byte. Longer: h = length, then h = mum(a ^ P0, b ^ P1 ^ h) for each 16
    bytes (a, b little-endian) while more than 16 are left, then for the last 16 (for
    8 to 16 bytes: the first 8 and the last 8), then splitmix64."""
    b = u.encode()
    n = len(b)
    le = lambda i: int.from_bytes(b[i:i + 8], "little")
    if n < 8:
        return splitmix64(le(0) | n << 56)
    p0, p1 = 0xa0761d6478bd642f, 0xe7037ed1a0b428db
    h, i = n, 0
    while n - i > 16:
        h = mum(le(i) ^ p0, le(i + 8) ^ p1 ^ h)
        i += 16
    return splitmix64(mum(le(max(n - 16, 0)) ^ p0, le(n - 8) ^ p1 ^ h))


def feature(units, seed):
    h = seed
    for u in units:
        h = ((h ^ unit_hash(u)) * 0x9e3779b97f4a7c15) & M
    return splitmix64(h)


def features(shingles, seed=0, mod=0, bag=False):
    hs = [feature(s, seed) for s in shingles]
    if mod > 1:
        hs = [h for h in hs if h % mod == 0]
    if not bag:
        hs = sorted(set(hs))
    return ["%016x" % h for h in hs]


cases = {
    "english-words5": features(shingles(words(
        "The quick brown fox jumps over the lazy dog; the quick brown fox jumps again."), 5)),
    "english-bag-k3": features(shingles(words("A rose is a rose is a rose."), 3), bag=True),
    "english-chars5": features(char_shingles("Near-duplicate detection, at web scale!", 5)),
    "seeded-sampled": features(shingles(words(
        "It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness"), 5), seed=0x9E3779B97F4A7C15, mod=2),
    "long-words": features(shingles(words(
        "Supercalifragilisticexpialidocious antidisestablishmentarianism "
        "pneumonoultramicroscopicsilicovolcanoconiosis incomprehensibilities "
        "characteristically sesquipedalian"), 2)),
    "short": features(shingles(words("Hello, world"), 5)),
    "empty": [],
}
bad = [name for name, want in cases.items() if golden[name] != want]
for name in bad:
    print("mismatch:", name, file=sys.stderr)
print("%d cases checked, %d mismatches" % (len(cases), len(bad)))
sys.exit(1 if bad else 0)
