"""The crawler-side pre-screen: "is this URL certainly new?" without a round trip.

A :class:`Prescreen` holds a copy of the service's key filter (``GET /v1/prescreen``,
refreshed with its ETag) and canonicalizes URLs locally with
:class:`neardup.urlkey.Canonicalizer`. ``seen_url(url)`` is False when the URL's
canonical form was certainly not stored when the snapshot was taken: a crawler may then
fetch it without asking the service whether it is a URL duplicate. True means "maybe":
ask the service. It is True also for a URL outside the canonicalizer's subset, when the
snapshot is stale, and when the service's canonicalization did not match the local one
at start (``Info.url_profile`` is then None).

The Go client's pre-screen (``client/prescreen``) also screens a fetched page's
main-text hash; that needs the extractor, so this one screens URLs only. Its answers are
the Go client's for every URL it canonicalizes (``testdata/vectors.json``).
"""

from __future__ import annotations

import threading
import time
from math import exp
from dataclasses import dataclass
from typing import Optional

from .client import Client, Document
from .errors import NeardupError
from .keyfilter import KeyFilter
from .urlkey import AGGRESSIVE, SAFE, Canonicalizer

__all__ = ["Prescreen", "Info", "PROBE_URLS"]

#: URLs whose canonical forms tell the profiles apart, and exercise every step the local
#: canonicalizer takes; the service canonicalizes them once at start.
PROBE_URLS = (
    "HTTPS://WWW.Example.COM:443/a/./b/../index.html?utm_source=x&b=2&a=1&sid=7#f",
    "http://example.com:8080/x;jsessionid=1/%7Euser//y/?z=%41&q=a=b",
    "https://www2.example.org/(S(abcdefghijklmnopqrstuvwx))/default.aspx?",
)


@dataclass
class Info:
    """What a Prescreen holds: the snapshot's ETag, when it was fetched and last
    confirmed (time.time()), whether it is stale, the filter's keys, capacity and
    expected false-positive rate, the URL profile found to match the service (None:
    every URL answer is "maybe"), and the last refresh's error."""

    etag: str
    fetched: float
    confirmed: float
    stale: bool
    keys: int
    capacity: int
    false_positive_rate: float
    url_profile: Optional[str]
    error: Optional[BaseException]


class Prescreen:
    """A local copy of the service's key filter that answers for URLs.

    ``every`` is how often (seconds) a background thread asks for a new snapshot
    (sending the ETag, so an unchanged filter costs a 304); a value <= 0 means never
    (call :meth:`refresh`). ``stale`` is how long a snapshot stays in use without the
    service confirming it; past it every answer is "maybe". None means 5 * every (no
    limit when every <= 0). ``profile`` forces the URL profile ("aggressive" or
    "safe") instead of probing the service for it.

    Lookups read one immutable snapshot, which a refresh replaces whole, so a Prescreen
    may be shared by threads. Call :meth:`close` to stop the refresh thread.
    """

    def __init__(
        self,
        client: Client,
        every: float = 60.0,
        stale: Optional[float] = None,
        profile: Optional[str] = None,
    ) -> None:
        self._client = client
        self.every = every
        self.stale = stale if stale is not None else (5 * every if every > 0 else 0.0)
        self._lock = threading.Lock()
        self._snap: Optional[tuple[KeyFilter, str, float]] = None  # filter, etag, fetched
        self._confirmed = 0.0
        self._error: Optional[BaseException] = None
        self.refresh()
        self._profile = profile if profile is not None else self._probe_profile()
        self._canon = Canonicalizer(self._profile) if self._profile else None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        if every > 0:
            self._thread = threading.Thread(target=self._loop, name="neardup-prescreen", daemon=True)
            self._thread.start()

    def _probe_profile(self) -> Optional[str]:
        """Return the profile whose answers are the service's for PROBE_URLS, or None."""
        got = []
        for i, u in enumerate(PROBE_URLS):
            v = self._client.check(Document(id=f"neardup-prescreen-probe-{i}", url=u, text="probe"))
            got.append(v.url)
        for p in (AGGRESSIVE, SAFE):
            c = Canonicalizer(p)
            if [c.canonicalize(u) for u in PROBE_URLS] == got:
                return p
        return None

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.refresh()
            except NeardupError:
                pass  # kept for info(); the snapshot goes stale if this goes on

    def close(self) -> None:
        """Stop the background refresh. Answers keep coming from the last snapshot."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> "Prescreen":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def refresh(self) -> bool:
        """Ask the service for its filter now; return whether it changed.

        On a 304 the snapshot stays and counts as confirmed; on an error it stays,
        unconfirmed, and the error is raised (and kept for :meth:`info`).
        """
        with self._lock:
            etag = self._snap[1] if self._snap else None
            try:
                data, new_etag = self._client.prescreen_filter(etag)
                now = time.time()
                if data is None:
                    if self._snap is None:
                        raise NeardupError("neardup: GET /v1/prescreen: 304 Not Modified without a snapshot to keep")
                    self._confirmed = now
                    self._error = None
                    return False
                f = KeyFilter.from_bytes(data)
            except (NeardupError, ValueError) as e:
                self._error = e
                raise
            self._snap = (f, new_etag, now)
            self._confirmed = now
            self._error = None
            return True

    def _filter(self) -> Optional[KeyFilter]:
        s = self._snap
        if s is None or (self.stale > 0 and time.time() - self._confirmed > self.stale):
            return None
        return s[0]

    def canonical_url(self, raw: str) -> Optional[str]:
        """Return raw's canonical URL as the service makes it, or None when the local
        canonicalizer leaves raw to the service (or the service's profile is unknown)."""
        return self._canon.canonicalize(raw) if self._canon else None

    def seen_url(self, raw: str) -> bool:
        """Report whether raw's canonical URL may be stored; False is certain.

        It costs a local canonicalization and a filter lookup (SHA-256 of the URL
        and up to k bit tests), no round trip.
        """
        c = self._canon.canonicalize(raw) if self._canon else None
        if c is None:
            return True
        f = self._filter()
        return f is None or f.has_url(c)

    def info(self) -> Info:
        """Describe the snapshot and the last refresh."""
        assert self._snap is not None
        f, etag, fetched = self._snap
        # bits-and-blooms' estimate: (1 - e^(-k n / m))^k.
        rate = (1 - exp(-f.k * f.count / f.m)) ** f.k
        return Info(
            etag=etag, fetched=fetched, confirmed=self._confirmed, stale=self._filter() is None,
            keys=f.count, capacity=f.capacity, false_positive_rate=rate,
            url_profile=self._profile, error=self._error,
        )
