"""The canonicalizer's common path and caches: answers the Go canonicalizer gave
(urlnorm, both profiles) for URLs that take each shortcut, and the shortcuts checked
against the full steps they skip."""

from __future__ import annotations

import random
import unittest

from neardup.urlkey import AGGRESSIVE, SAFE, Canonicalizer

# input, Aggressive, Safe: written by Go's urlnorm.
GO = (
    ("http://example.com/?%7Ex", "http://example.com/?~x", "http://example.com/?~x"),
    ("http://example.com/?n%41me=1&b=2", "http://example.com/?b=2&nAme=1", "http://example.com/?b=2&nAme=1"),
    ("https://www.Example.com/a/INDEX.HTML", "http://example.com/a", "https://www.example.com/a/INDEX.HTML"),
    ("http://example.com/dir/", "http://example.com/dir", "http://example.com/dir/"),
    (
        "http://example.com/Default.aspx?utm_source=a&UTM_x=1&sid=3&a=%41",
        "http://example.com/?a=A",
        "http://example.com/Default.aspx?UTM_x=1&a=A&sid=3&utm_source=a",
    ),
    ("HTTP://WWW.EXAMPLE.COM:0080/x", "http://example.com/x", "http://www.example.com/x"),
    ("http://example.com?q=a=b", "http://example.com/?q=a%3Db", "http://example.com/?q=a%3Db"),
    ("http://example.com/a?&&b=1&", "http://example.com/a?b=1", "http://example.com/a?&&&b=1"),
    ("https://www.example.com:443?", "http://example.com/", "https://www.example.com/?"),
    ("http://www2.www.example.com./I/index.php#top", "http://example.com/I", "http://www2.www.example.com/I/index.php"),
    ("http://example.com/story-1.html?id=%2561", "http://example.com/story-1.html?id=a", "http://example.com/story-1.html?id=a"),
    ("http://example.com/a;SID=1/d", "http://example.com/a/d", "http://example.com/a;SID=1/d"),
)


class CommonPathTest(unittest.TestCase):
    def test_go_answers(self) -> None:
        for profile, col in ((AGGRESSIVE, 1), (SAFE, 2)):
            c = Canonicalizer(profile)
            for _ in range(2):  # the second time from the caches
                for row in GO:
                    self.assertEqual(c.canonicalize(row[0]), row[col], (profile, row[0]))

    def test_declined_heads_stay_declined(self) -> None:
        c = Canonicalizer()
        for raw in ("http://10.0.0.1/a", "http://xn--bcher-kva.de/a", "http://example.com:99999/a", "http://u@example.com/a"):
            for _ in range(2):
                self.assertIsNone(c.canonicalize(raw), raw)

    def test_common_path_is_the_full_path(self) -> None:
        # Paths without an escape, dot segment, parameter, session or doubled slash skip
        # _path; its answer must be theirs.
        r = random.Random(30)
        segs = ("a", "B", "index.html", "Index.Htm", "default.aspx", "i", "d", "x.html", "idx", "", "default")
        for profile in (AGGRESSIVE, SAFE):
            c = Canonicalizer(profile)
            for _ in range(3000):
                path = "/" + "/".join(r.choice(segs) for _ in range(r.randint(1, 4)))
                if "//" in path:
                    continue
                got = c.canonicalize("http://example.com" + path)
                self.assertEqual(got, "http://example.com" + c._path(path), (profile, path))

    def test_caches_overflow(self) -> None:
        c = Canonicalizer()
        first = c.canonicalize("https://www.example.com/a?utm_source=x&b=1")
        for i in range(5000):
            c.canonicalize(f"http://h{i}.example.com/?n{i}=1")
        self.assertEqual(c.canonicalize("https://www.example.com/a?utm_source=x&b=1"), first)
        self.assertEqual(first, "http://example.com/a?b=1")


if __name__ == "__main__":
    unittest.main()
