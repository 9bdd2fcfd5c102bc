"""Pre-screen throughput on one core, from a warm filter (no network).

    PYTHONPATH=clients/python/src python3 clients/python/bench/prescreen_bench.py

It reads the key filter of client/prescreen/testdata/vectors.json (a version 2
snapshot, as the service sends) and times, over crawl-like URLs: the whole
Prescreen.seen_url (local canonicalization, then the filter) for new URLs and for URLs
of stored pages, KeyFilter.has_url alone on canonical URLs, the canonicalization alone,
and has_url on a version 1 snapshot (MurmurHash3 positions) for comparison. Each figure is the best
of --repeat runs, in URLs per second of the process's CPU time (time.process_time), so
that other processes on the machine do not count against it.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import time
from typing import Callable, List

from neardup.keyfilter import KeyFilter
from neardup.urlkey import Canonicalizer

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "..", "..", "client", "prescreen", "testdata", "vectors.json")


def crawl_urls(n: int, salt: str) -> List[str]:
    shapes = (
        "https://www.example.com/news/2024/{s}story-{i}.html?utm_source=rss&id={i}",
        "http://docs.example.org/{s}guide/section-{i}/",
        "https://shop.example.net/{s}p/{i}?color=red&size=m&sid=abc",
        "https://example.com/{s}blog/{i}#comments",
    )
    return [shapes[i % len(shapes)].format(i=i, s=salt) for i in range(n)]


def rate(f: Callable[[str], object], xs: List[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for x in xs:
            f(x)
        best = min(best, time.process_time() - start)
    return len(xs) / best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100_000, help="URLs a run")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with open(VECTORS, encoding="utf-8") as fh:
        v = json.load(fh)
    f = KeyFilter.from_bytes(base64.b64decode(v["filter"]))
    canon = Canonicalizer()
    stored_urls = [u["input"] for u in v["urls"] if u["in_filter"] and canon.canonicalize(u["input"])]

    def seen_url(raw: str) -> bool:
        # Prescreen.seen_url without the service: the same two steps.
        c = canon.canonicalize(raw)
        return c is None or f.has_url(c)

    new = crawl_urls(args.n, "new/")
    stored = (stored_urls * (args.n // max(len(stored_urls), 1) + 1))[: args.n]
    canonical = [canon.canonicalize(u) or "" for u in new]
    print(f"filter: version 2, m={f.m} bits, k={f.k}, {f.count} keys")
    print(f"seen_url, new URLs:        {rate(seen_url, new, args.repeat):10,.0f} URLs/s")
    print(f"seen_url, stored URLs:     {rate(seen_url, stored, args.repeat):10,.0f} URLs/s")
    print(f"has_url, canonical URLs:   {rate(f.has_url, canonical, args.repeat):10,.0f} URLs/s")
    print(f"canonicalize, new URLs:    {rate(canon.canonicalize, new, args.repeat):10,.0f} URLs/s")
    v1 = KeyFilter.from_bytes(base64.b64decode(v["filter_v1"]))
    print(f"has_url, version 1 filter: {rate(v1.has_url, canonical, args.repeat):10,.0f} URLs/s (MurmurHash3 in Python)")


if __name__ == "__main__":
    main()
