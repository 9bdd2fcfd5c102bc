#!/usr/bin/env python3
"""Checks the ASCII cases of golden.json against an independent implementation.

For ASCII text without apostrophes the default pipeline is: lower-case, words are runs of
[a-z0-9], K-shingles joined by single spaces (or K-character substrings of the words
joined by single spaces), XXH64 with the seed, sampled, then distinct and sorted (sets).
Needs the xxhash module (Debian: python3-xxhash). Run from the shingle folder:
    python3 testdata/check_golden.py
"""
import json
import re
import sys

import xxhash

golden = json.load(open("testdata/golden.json"))


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def word_shingles(toks, k):
    if 0 < len(toks) < k:
        return [" ".join(toks)]
    return [" ".join(toks[i:i + k]) for i in range(len(toks) - k + 1)]


def char_shingles(text, k):
    s = " ".join(words(text))
    return [s[i:i + k] for i in range(len(s) - k + 1)]


def features(shingles, seed=0, mod=0, bag=False):
    hs = [xxhash.xxh64_intdigest(s.encode(), seed) for s in shingles]
    if mod > 1:
        hs = [h for h in hs if h % mod == 0]
    if not bag:
        hs = sorted(set(hs))
    return ["%016x" % h for h in hs]


cases = {
    "english-words5": features(word_shingles(words(
        "The quick brown fox jumps over the lazy dog; the quick brown fox jumps again."), 5)),
    "english-bag-k3": features(word_shingles(words("A rose is a rose is a rose."), 3), bag=True),
    "english-chars5": features(char_shingles("Near-duplicate detection, at web scale!", 5)),
    "seeded-sampled": features(word_shingles(words(
        "It was the best of times, it was the worst of times, it was the age of wisdom, "
        "it was the age of foolishness"), 5), seed=0x9E3779B97F4A7C15, mod=2),
    "short": features(word_shingles(words("Hello, world"), 5)),
    "empty": [],
}
bad = [name for name, want in cases.items() if golden[name] != want]
for name in bad:
    print("mismatch:", name, file=sys.stderr)
print("%d cases checked, %d mismatches" % (len(cases), len(bad)))
sys.exit(1 if bad else 0)
