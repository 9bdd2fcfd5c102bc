"""The Scrapy components' settings and decisions, without a crawl (crawl_test.go runs the
real crawl). Skipped when Scrapy is not installed."""

from __future__ import annotations

import unittest

try:
    from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
    from scrapy.settings import Settings

    from neardup.scrapy import NeardupDownloaderMiddleware, NeardupPipeline, _client, _on_error
except ImportError as e:  # pragma: no cover
    raise unittest.SkipTest(f"scrapy is not installed ({e}): apt-get install python3-scrapy")

from neardup import Verdict


class Stats:
    def __init__(self) -> None:
        self.values: dict = {}

    def inc_value(self, key: str, count: int = 1) -> None:
        self.values[key] = self.values.get(key, 0) + count


class Request:
    def __init__(self, url: str) -> None:
        self.url = url
        self.meta: dict = {}
        self.dont_filter = False


class ScrapyTest(unittest.TestCase):
    def test_not_configured_without_url(self) -> None:
        with self.assertRaises(NotConfigured):
            _client(Settings())
        c = _client(Settings({"NEARDUP_URL": "http://127.0.0.1:1", "NEARDUP_TOKEN": "t", "NEARDUP_TIMEOUT": "2"}))
        self.assertEqual((c.token, c.timeout), ("t", 2.0))
        with self.assertRaises(ValueError):
            _on_error(Settings({"NEARDUP_ON_ERROR": "maybe"}))

    def test_service_down_at_start(self) -> None:
        # No service: the middleware starts without a pre-screen, and lets requests
        # through (NEARDUP_ON_ERROR keep) while the service does not answer.
        class Crawler:
            settings = Settings({"NEARDUP_URL": "http://127.0.0.1:9", "NEARDUP_RETRIES": 0, "NEARDUP_TIMEOUT": 1})
            stats = Stats()

            class signals:
                @staticmethod
                def connect(*a: object, **k: object) -> None:
                    pass

        with self.assertLogs("neardup.scrapy", "WARNING"):
            mw = NeardupDownloaderMiddleware.from_crawler(Crawler)
        self.assertIsNone(mw.prescreen)
        self.assertIsNone(mw._known("http://example.com/"))

    def test_pipeline_decides_by_verdict(self) -> None:
        stats = Stats()
        p = NeardupPipeline(_client(Settings({"NEARDUP_URL": "http://127.0.0.1:1"})), stats, frozenset({"unique"}), True, "keep")
        item: dict = {"url": "http://example.com/", "html": b"<p>x</p>"}
        self.assertIs(p._decide(Verdict(id="a", verdict="unique", survivor="a", added=True), item), item)
        self.assertEqual(item["neardup"]["verdict"], "unique")
        with self.assertRaises(DropItem):
            p._decide(Verdict(id="b", verdict="near-duplicate", survivor="a", added=True), dict(item))
        self.assertIs(p._decide(None, item), item)  # the service failed: kept, counted
        self.assertEqual(stats.values, {"neardup/unique": 1, "neardup/near-duplicate": 1, "neardup/dropped": 1, "neardup/error": 1})

    def test_middleware_decides(self) -> None:
        stats = Stats()
        c = _client(Settings({"NEARDUP_URL": "http://127.0.0.1:1"}))
        mw = NeardupDownloaderMiddleware(c, stats, None, True, "drop")
        self.assertIsNone(mw._decide(False, Request("http://example.com/a")))
        with self.assertRaises(IgnoreRequest):
            mw._decide(True, Request("http://example.com/a"))
        with self.assertRaises(IgnoreRequest):
            mw._decide(None, Request("http://example.com/a"))
        r = Request("http://example.com/a")
        r.dont_filter = True
        self.assertIsNone(mw.process_request(r, None))
        self.assertEqual(stats.values, {"neardup/url-known": 1, "neardup/error": 1})


if __name__ == "__main__":
    unittest.main()
