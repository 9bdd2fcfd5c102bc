"""The client and the pre-screen against a real service: NEARDUP_TEST_URL names an empty
`neardup serve` (clients/python/crawl_test.go starts one). Skipped without it."""

from __future__ import annotations

import os
import unittest

from neardup import APIError, Client, Document, Prescreen

URL = os.environ.get("NEARDUP_TEST_URL", "")


def page(words: str) -> str:
    return f"<html><body><article><h1>Title</h1><p>{words}</p></article></body></html>"


# Each test has words of its own, so that neither test's pages are near the other's.
TEXT = " ".join(f"word{i} lorem ipsum dolor sit amet" for i in range(60))
PRESCREEN_TEXT = " ".join(f"ps{i} the quick brown fox jumps over" for i in range(60))


@unittest.skipUnless(URL, "NEARDUP_TEST_URL is not set: go test ./clients/python runs this against a real service")
class ServiceTest(unittest.TestCase):
    def test_round_trip(self) -> None:
        c = Client(URL)
        self.addCleanup(c.close)
        v = c.add(Document(id="svc-a", url="https://www.example.com/svc/a/?utm_source=x", html=page(TEXT)))
        self.assertEqual((v.verdict, v.added, v.url), ("unique", True, "http://example.com/svc/a"))
        v = c.check(Document(id="svc-b", url="http://example.com/svc/b", html=page(TEXT)))
        self.assertEqual((v.verdict, v.added), ("exact-duplicate", False))
        self.assertEqual(v.matches[0].id, "svc-a")
        near = TEXT.replace("word7 ", "changed ")
        v = c.check(Document(id="svc-c", url="http://example.com/svc/c", html=page(near)))
        self.assertEqual(v.verdict, "near-duplicate")
        stored = c.get("svc-a")
        assert stored is not None
        self.assertEqual(stored["url"], "http://example.com/svc/a")
        matches = c.query(simhash=stored["simhash"])
        self.assertIn("svc-a", [m.id for m in matches])
        qs = c.query_batch([(stored["simhash"], None), (None, stored["minhash"])])
        self.assertEqual([r.error for r in qs], [None, None])
        res = c.batch([Document(id="svc-d", text="one two three"), Document(id="svc-d", text="x")], add=True)
        self.assertEqual(res[0].verdict.verdict, "unique")  # type: ignore[union-attr]
        self.assertEqual(res[1].error.code, "duplicate_id")  # type: ignore[union-attr]
        self.assertTrue(c.delete("svc-d"))
        self.assertFalse(c.delete("svc-d"))
        self.assertIsNone(c.get("svc-d"))
        self.assertGreaterEqual(c.stats()["documents"], 1)
        with self.assertRaises(APIError) as cm:
            c.add(Document(id="svc-e"))
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "invalid_document"))

    def test_prescreen(self) -> None:
        c = Client(URL)
        self.addCleanup(c.close)
        urls = [f"https://www.example.org/ps/{i}/" for i in range(200)]
        for i, u in enumerate(urls[:100]):
            c.add(Document(id=f"ps-{i}", url=u, text=f"prescreen page {i} " + PRESCREEN_TEXT))
        with Prescreen(c, every=0) as p:
            info = p.info()
            self.assertEqual(info.url_profile, "aggressive")
            # Every stored URL, in any variant, is "maybe"; new ones are mostly certain.
            for u in urls[:100]:
                self.assertTrue(p.seen_url(u))
                variant = u.replace("https://www.example.org", "HTTP://Example.ORG") + "index.html?utm_source=x"
                self.assertTrue(p.seen_url(variant), variant)
            new = sum(not p.seen_url(u) for u in urls[100:])
            self.assertGreater(new, 90)
            # Outside the local subset the answer is "maybe".
            self.assertTrue(p.seen_url("http://10.0.0.1/never-stored"))
            # Unchanged: a 304. Changed: a new snapshot that holds the new URL.
            self.assertFalse(p.refresh())
            c.add(Document(id="ps-new", url=urls[150], text="a new page " + PRESCREEN_TEXT))
            self.assertTrue(p.refresh())
            self.assertTrue(p.seen_url(urls[150]))
            self.assertNotEqual(p.info().etag, info.etag)


if __name__ == "__main__":
    unittest.main()
