"""The spider of the crawl tests (clients/python/crawl_test.go): follows every link of the
generated site and yields each page as an item for NeardupPipeline. With -a
stats_out=FILE it writes the crawl's stats there as JSON when it closes."""

from __future__ import annotations

import json
from typing import Any, Iterator, Optional

import scrapy

from neardup.scrapy import page_item


class SiteSpider(scrapy.Spider):
    name = "site"

    def __init__(self, start: str = "", stats_out: Optional[str] = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.start_urls = [u for u in start.split(",") if u]
        self.stats_out = stats_out

    def parse(self, response: Any) -> Iterator[Any]:
        yield page_item(response)
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, self.parse)

    def closed(self, reason: str) -> None:
        if self.stats_out:
            with open(self.stats_out, "w", encoding="utf-8") as f:
                json.dump(self.crawler.stats.get_stats(), f, default=str)
