"""Scrapy integration: skip URLs the service knows, drop pages it calls duplicates.

Two components, enabled in a project's settings::

    NEARDUP_URL = "http://127.0.0.1:8080"
    DOWNLOADER_MIDDLEWARES = {"neardup.scrapy.NeardupDownloaderMiddleware": 950}
    ITEM_PIPELINES = {"neardup.scrapy.NeardupPipeline": 300}

:class:`NeardupDownloaderMiddleware` drops a request (``IgnoreRequest``) whose URL's
canonical form the service already stores: the local pre-screen answers "certainly
new" for most new URLs without a round trip, and only a "maybe" asks the service
(``POST /v1/check`` with the URL). :class:`NeardupPipeline` posts each item's page
(``POST /v1/documents``, stored unless ``NEARDUP_ADD`` is False), puts the verdict in the
item's ``neardup`` field and drops the item (``DropItem``) unless the verdict is in
``NEARDUP_KEEP``. Items carry their page in the fields ``url`` and ``html`` (bytes or
str; :func:`page_item` makes such an item from a response), and optionally ``id``.

Calls to the service run in Twisted's thread pool, so the crawl goes on while they wait.
Counts go to Scrapy's stats: ``neardup/unique``, ``neardup/near-duplicate``,
``neardup/exact-duplicate``, ``neardup/url-duplicate``, ``neardup/changed``,
``neardup/dropped``, ``neardup/error``, and for requests ``neardup/url-new`` (the
pre-screen's certain answers), ``neardup/url-asked`` and ``neardup/url-known``.

Settings: ``NEARDUP_URL`` (required; without it both components are disabled),
``NEARDUP_TOKEN``, ``NEARDUP_TIMEOUT`` (seconds, 30), ``NEARDUP_RETRIES`` (4),
``NEARDUP_KEEP`` (verdicts whose items pass, ``["unique", "changed"]``),
``NEARDUP_ADD`` (True), ``NEARDUP_PRESCREEN`` (True), ``NEARDUP_PRESCREEN_EVERY``
(refresh period in seconds, 60), ``NEARDUP_SKIP_KNOWN_URLS`` (True: the middleware
drops known URLs; False: it only counts them), ``NEARDUP_ON_ERROR`` ("keep": an item or
request the service could not judge passes; "drop": it is dropped).

A request with ``meta["neardup_skip"]`` set, or ``dont_filter``, is not screened.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, Optional

from scrapy import signals
from scrapy.exceptions import DropItem, IgnoreRequest, NotConfigured
from twisted.internet import threads

from .client import Client, Document, Verdict
from .errors import NeardupError
from .prescreen import Prescreen

__all__ = ["NeardupDownloaderMiddleware", "NeardupPipeline", "page_item"]

logger = logging.getLogger(__name__)

# Twisted's deferToThread, typed for callers: it runs f(*args) in the reactor's thread
# pool and returns a Deferred of the result.
_in_thread: Callable[..., Any] = threads.deferToThread

_DEFAULT_KEEP = ("unique", "changed")
_PROBE_TEXT = "neardup url probe: a text no crawled page has"


def _client(settings: Any) -> Client:
    url = settings.get("NEARDUP_URL")
    if not url:
        raise NotConfigured("NEARDUP_URL is not set")
    return Client(
        url,
        token=settings.get("NEARDUP_TOKEN") or None,
        timeout=settings.getfloat("NEARDUP_TIMEOUT", 30.0),
        retries=settings.getint("NEARDUP_RETRIES", 4),
    )


def _on_error(settings: Any) -> str:
    v = settings.get("NEARDUP_ON_ERROR", "keep")
    if v not in ("keep", "drop"):
        raise ValueError(f"NEARDUP_ON_ERROR = {v!r}: use 'keep' or 'drop'")
    return str(v)


def page_item(response: Any, **fields: Any) -> Dict[str, Any]:
    """Return an item holding response's page as NeardupPipeline reads it (url, html,
    content_type), with fields added."""
    item: Dict[str, Any] = {"url": response.url, "html": response.body}
    ct = response.headers.get(b"Content-Type")
    if ct:
        item["content_type"] = ct.decode("latin-1")
    item.update(fields)
    return item


class NeardupDownloaderMiddleware:
    """Drops requests whose canonical URL the service already stores.

    The pre-screen answers first; a "maybe" asks the service with a check of the URL
    (a stored page with that canonical URL makes the verdict "changed" or a URL
    duplicate). One instance serves the whole crawl; the service calls run in
    Twisted's thread pool.
    """

    def __init__(self, client: Client, stats: Any, prescreen: Optional[Prescreen], skip: bool, on_error: str) -> None:
        self.client = client
        self.stats = stats
        self.prescreen = prescreen
        self.skip = skip
        self.on_error = on_error

    @classmethod
    def from_crawler(cls, crawler: Any) -> "NeardupDownloaderMiddleware":
        s = crawler.settings
        client = _client(s)
        prescreen = None
        if s.getbool("NEARDUP_PRESCREEN", True):
            try:
                prescreen = Prescreen(client, every=s.getfloat("NEARDUP_PRESCREEN_EVERY", 60.0))
            except NeardupError as e:
                # The crawl starts anyway; every URL is then asked of the service, and
                # NEARDUP_ON_ERROR decides while it does not answer.
                logger.warning("neardup: no pre-screen: %s", e)
        mw = cls(client, crawler.stats, prescreen, s.getbool("NEARDUP_SKIP_KNOWN_URLS", True), _on_error(s))
        crawler.signals.connect(mw.spider_closed, signal=signals.spider_closed)
        return mw

    def spider_closed(self, spider: Any) -> None:
        if self.prescreen is not None:
            self.prescreen.close()

    def process_request(self, request: Any, spider: Any) -> Any:
        if request.dont_filter or request.meta.get("neardup_skip"):
            return None
        if self.prescreen is not None and not self.prescreen.seen_url(request.url):
            self.stats.inc_value("neardup/url-new")
            return None
        self.stats.inc_value("neardup/url-asked")
        d = _in_thread(self._known, request.url)
        d.addCallback(self._decide, request)
        return d

    def _known(self, url: str) -> Optional[bool]:
        try:
            v = self.client.check(Document(id="neardup-url-probe", url=url, text=_PROBE_TEXT))
        except NeardupError:
            return None
        return v.verdict in ("changed", "url-duplicate") or any(m.kind == "url-duplicate" for m in v.matches)

    def _decide(self, known: Optional[bool], request: Any) -> None:
        if known is None:
            self.stats.inc_value("neardup/error")
            if self.on_error == "drop":
                raise IgnoreRequest(f"neardup: the service could not say whether {request.url} is known")
            return None
        if known:
            self.stats.inc_value("neardup/url-known")
            request.meta["neardup_url_known"] = True
            if self.skip:
                raise IgnoreRequest(f"neardup: {request.url} is already stored")
        return None


class NeardupPipeline:
    """Posts each item's page to the service and drops the duplicates.

    The verdict (a dict: verdict, survivor, url, matches) goes into the item's
    ``neardup`` field when the item takes it.
    """

    def __init__(self, client: Client, stats: Any, keep: frozenset[str], add: bool, on_error: str) -> None:
        self.client = client
        self.stats = stats
        self.keep = keep
        self.add = add
        self.on_error = on_error

    @classmethod
    def from_crawler(cls, crawler: Any) -> "NeardupPipeline":
        s = crawler.settings
        keep = frozenset(s.getlist("NEARDUP_KEEP", list(_DEFAULT_KEEP)))
        return cls(_client(s), crawler.stats, keep, s.getbool("NEARDUP_ADD", True), _on_error(s))

    def process_item(self, item: Any, spider: Any) -> Any:
        url, html = item.get("url"), item.get("html")
        if html is None:
            return item  # not a page: nothing to judge
        doc = Document(id=str(item.get("id") or url), url=url, html=html, content_type=item.get("content_type"))
        d = _in_thread(self._post, doc)
        d.addCallback(self._decide, item)
        return d

    def _post(self, doc: Document) -> Optional[Verdict]:
        try:
            return self.client.add(doc) if self.add else self.client.check(doc)
        except NeardupError:
            return None

    def _decide(self, v: Optional[Verdict], item: Any) -> Any:
        if v is None:
            self.stats.inc_value("neardup/error")
            if self.on_error == "drop":
                raise DropItem(f"neardup: the service could not judge {item.get('url')}")
            return item
        self.stats.inc_value("neardup/" + v.verdict)
        try:
            item["neardup"] = {
                "verdict": v.verdict, "survivor": v.survivor, "url": v.url,
                "matches": [{"id": m.id, "url": m.url, "kind": m.kind} for m in v.matches],
            }
        except (KeyError, TypeError):
            pass  # an Item class without the field keeps its own fields only
        if v.verdict not in self.keep:
            self.stats.inc_value("neardup/dropped")
            raise DropItem(f"neardup: {v.verdict} of {v.survivor}")
        return item
