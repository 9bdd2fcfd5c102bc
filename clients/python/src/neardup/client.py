"""The HTTP client of the neardup service (see docs/service.md in the repository)."""

from __future__ import annotations

import base64
import email.utils
import gzip as _gzip
import http.client
import json
import random
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .errors import APIError, NeardupError, TransportError

__all__ = [
    "Client",
    "Document",
    "Verdict",
    "Match",
    "BatchResult",
    "QueryResult",
    "VERDICTS",
]

#: The verdict kinds, as the service names them.
VERDICTS = ("unique", "url-duplicate", "exact-duplicate", "near-duplicate", "changed")

_RETRY_STATUS = frozenset((429, 502, 503, 504))
#: The longest Retry-After the client waits for; a longer one ends the retries.
MAX_RETRY_AFTER = 60.0
_GZIP_MIN = 1024
_MAX_ERROR_BODY = 64 << 10


@dataclass
class Document:
    """A page or text to check or add.

    Give ``html`` (str, or bytes in any charset: bytes that are not UTF-8 are sent as
    ``html_base64`` and the service reads their charset from ``content_type``, a byte
    order mark or a ``<meta>`` tag) or ``text``. ``fetch_time`` is an RFC 3339 string.
    """

    id: str
    url: Optional[str] = None
    html: Union[str, bytes, None] = None
    text: Optional[str] = None
    content_type: Optional[str] = None
    priority: Optional[float] = None
    fetch_time: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        """Return the document as the service's JSON object."""
        out: Dict[str, Any] = {"id": self.id}
        if self.url is not None:
            out["url"] = self.url
        if isinstance(self.html, bytes):
            try:
                out["html"] = self.html.decode("utf-8")
            except UnicodeDecodeError:
                out["html_base64"] = base64.b64encode(self.html).decode("ascii")
        elif self.html is not None:
            out["html"] = self.html
        if self.text is not None:
            out["text"] = self.text
        if self.content_type is not None:
            out["content_type"] = self.content_type
        if self.priority is not None:
            out["priority"] = self.priority
        if self.fetch_time is not None:
            out["fetch_time"] = self.fetch_time
        return out


@dataclass
class Match:
    """A stored document that a checked one duplicates (the service's Match)."""

    id: str
    kind: str
    distance: int
    similarity: float
    url: str = ""
    level: str = ""

    @classmethod
    def from_json(cls, o: Dict[str, Any]) -> "Match":
        return cls(
            id=o["id"], kind=o["kind"], distance=int(o.get("distance", 0)),
            similarity=float(o.get("similarity", 0.0)), url=o.get("url", ""), level=o.get("level", ""),
        )


@dataclass
class Verdict:
    """The service's answer for one document.

    ``verdict`` is one of VERDICTS; ``survivor`` the id the keep policy keeps;
    ``added`` whether the document was stored; ``url`` its canonical URL.
    """

    id: str
    verdict: str
    survivor: str
    added: bool
    url: str = ""
    raw_url: str = ""
    matches: List[Match] = field(default_factory=list)

    @property
    def duplicate(self) -> bool:
        """True for an exact or near duplicate, or a URL already stored with this text."""
        return self.verdict in ("url-duplicate", "exact-duplicate", "near-duplicate")

    @classmethod
    def from_json(cls, o: Dict[str, Any]) -> "Verdict":
        return cls(
            id=o["id"], verdict=o["verdict"], survivor=o.get("survivor", ""), added=bool(o.get("added")),
            url=o.get("url", ""), raw_url=o.get("raw_url", ""),
            matches=[Match.from_json(m) for m in o.get("matches") or ()],
        )


@dataclass
class BatchResult:
    """One document's result in a batch: a verdict, or its own error."""

    verdict: Optional[Verdict] = None
    error: Optional[APIError] = None


@dataclass
class QueryResult:
    """One query's result in a batch: its matches, or its own error."""

    matches: List[Match] = field(default_factory=list)
    error: Optional[APIError] = None


class Client:
    """A client of one neardup service.

    ``base_url`` is the service's root ("http://127.0.0.1:8080"). ``token`` is sent as
    a bearer token. ``timeout`` bounds each attempt's connect and each read, in
    seconds. A failed request is sent again up to ``retries`` times when the service
    answers 429, 502, 503 or 504 or the connection fails before an answer, after a
    random wait of up to ``min(max_backoff, backoff * 2**retry)`` seconds or the
    response's Retry-After if that is longer (a Retry-After over a minute ends the
    retries). With ``gzip`` request bodies of 1 KiB or more are compressed.

    A timed-out attempt (``socket.timeout`` is an ``OSError``) is retried like a refused
    one. A Client keeps one HTTP connection per thread and may be shared by threads.
    """

    def __init__(
        self,
        base_url: str,
        token: Optional[str] = None,
        timeout: float = 30.0,
        retries: int = 4,
        backoff: float = 0.05,
        max_backoff: float = 2.0,
        gzip: bool = False,
        batch_size: int = 1000,
    ) -> None:
        u = urllib.parse.urlsplit(base_url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError(f"neardup: base URL {base_url!r}: give an http or https URL such as http://127.0.0.1:8080")
        self.base_url = base_url.rstrip("/")
        self._https = u.scheme == "https"
        self._host = u.hostname
        self._port = u.port
        self._prefix = u.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.retries = max(retries, 0)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.gzip = gzip
        self.batch_size = max(batch_size, 1)
        self._local = threading.local()

    # --- transport -----------------------------------------------------------------

    def _conn(self) -> http.client.HTTPConnection:
        c: Optional[http.client.HTTPConnection] = getattr(self._local, "conn", None)
        if c is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            c = cls(self._host, self._port, timeout=self.timeout)
            self._local.conn = c
        return c

    def _drop_conn(self) -> None:
        c = getattr(self._local, "conn", None)
        if c is not None:
            c.close()
            self._local.conn = None

    def close(self) -> None:
        """Close the calling thread's connection; the client opens another if used again."""
        self._drop_conn()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _send(self, method: str, path: str, body: Optional[bytes], headers: Dict[str, str]) -> Tuple[int, Dict[str, str], bytes]:
        conn = self._conn()
        try:
            conn.request(method, self._prefix + path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        except (OSError, http.client.HTTPException):
            self._drop_conn()
            raise
        hdrs = {k.lower(): v for k, v in resp.getheaders()}
        if resp.will_close:
            self._drop_conn()
        return resp.status, hdrs, data

    def request(
        self, method: str, path: str, body: Any = None, etag: Optional[str] = None
    ) -> Tuple[int, Dict[str, str], bytes]:
        """Send one request with retries and return (status, headers, body) of a 2xx or 304.

        body, if not None, is sent as JSON. Raises APIError for any other status and
        TransportError when no answer came.
        """
        headers = {"Accept": "application/json"}
        raw: Optional[bytes] = None
        if body is not None:
            raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            headers["Content-Type"] = "application/json"
            if self.gzip and len(raw) >= _GZIP_MIN:
                raw = _gzip.compress(raw, compresslevel=1)
                headers["Content-Encoding"] = "gzip"
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if etag:
            headers["If-None-Match"] = etag
        retry = 0
        while True:
            err: NeardupError
            wait = 0.0
            try:
                status, hdrs, data = self._send(method, path, raw, headers)
            except (OSError, http.client.HTTPException) as e:
                err = TransportError(method, path, e)
            else:
                if 200 <= status < 300 or status == 304:
                    return status, hdrs, data
                err = _api_error(status, data, method, path)
                if status not in _RETRY_STATUS:
                    raise err
                wait = _retry_after(status, hdrs.get("retry-after", ""))
            if retry >= self.retries or wait > MAX_RETRY_AFTER:
                raise err
            ceil = min(self.max_backoff, self.backoff * (2**retry))
            time.sleep(max(wait, random.uniform(0, ceil)))
            retry += 1

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        _, _, data = self.request(method, path, body)
        try:
            return json.loads(data)
        except ValueError as e:
            raise APIError(200, "", f"the answer is not JSON: {e}", method, path) from e

    # --- documents -----------------------------------------------------------------

    def add(self, doc: Document) -> Verdict:
        """Check doc and store it (``POST /v1/documents``, write scope): its verdict."""
        return Verdict.from_json(self._call("POST", "/v1/documents", doc.to_json()))

    def check(self, doc: Document) -> Verdict:
        """Check doc without storing it (``POST /v1/check``, read scope): its verdict."""
        return Verdict.from_json(self._call("POST", "/v1/check", doc.to_json()))

    def batch(self, docs: Sequence[Document], add: bool = True) -> List[BatchResult]:
        """Check (and with add, store) docs in order (``POST /v1/documents:batch``).

        One result per document, each a verdict or that document's own error. Requests
        carry at most ``batch_size`` documents; a 413 halves them.
        """
        out: List[BatchResult] = []
        i, size = 0, self.batch_size
        while i < len(docs):
            chunk = docs[i : i + size]
            try:
                ans = self._call("POST", "/v1/documents:batch", {"documents": [d.to_json() for d in chunk], "add": add})
            except APIError as e:
                if e.status == 413 and size > 1:
                    size //= 2
                    continue
                raise
            for r in ans.get("results") or ():
                if r.get("verdict") is not None:
                    out.append(BatchResult(verdict=Verdict.from_json(r["verdict"])))
                else:
                    ie = r.get("error") or {}
                    out.append(BatchResult(error=APIError(0, ie.get("code", ""), ie.get("message", ""))))
            i += len(chunk)
        return out

    def get(self, doc_id: str) -> Optional[Dict[str, Any]]:
        """Return the stored document (``GET /v1/documents/{id}``) as the service's JSON
        object, or None when no document has that id."""
        try:
            doc: Dict[str, Any] = self._call("GET", "/v1/documents/" + urllib.parse.quote(doc_id, safe=""))
            return doc
        except APIError as e:
            if e.status == 404 and e.code == "not_found":
                return None
            raise

    def delete(self, doc_id: str) -> bool:
        """Delete a stored document (``DELETE /v1/documents/{id}``); False if there was none."""
        try:
            ans = self._call("DELETE", "/v1/documents/" + urllib.parse.quote(doc_id, safe=""))
        except APIError as e:
            if e.status == 404 and e.code == "not_found":
                return False
            raise
        return bool(ans.get("deleted"))

    # --- fingerprints --------------------------------------------------------------

    def query(self, simhash: Optional[str] = None, minhash: Optional[str] = None) -> List[Match]:
        """Find stored near duplicates of fingerprints (``POST /v1/fingerprints/query``).

        simhash is 16 hex digits, minhash the hex of the signature's little-endian
        uint32 values (as ``get`` returns them); give at least one.
        """
        ans = self._call("POST", "/v1/fingerprints/query", _query(simhash, minhash))
        return [Match.from_json(m) for m in ans.get("matches") or ()]

    def query_batch(self, queries: Iterable[Tuple[Optional[str], Optional[str]]]) -> List[QueryResult]:
        """Answer many (simhash, minhash) queries (``POST /v1/fingerprints/query:batch``)."""
        qs = [_query(s, m) for s, m in queries]
        out: List[QueryResult] = []
        for i in range(0, len(qs), self.batch_size):
            ans = self._call("POST", "/v1/fingerprints/query:batch", {"queries": qs[i : i + self.batch_size]})
            for r in ans.get("results") or ():
                if r.get("error"):
                    e = r["error"]
                    out.append(QueryResult(error=APIError(0, e.get("code", ""), e.get("message", ""))))
                else:
                    out.append(QueryResult(matches=[Match.from_json(m) for m in r.get("matches") or ()]))
        return out

    # --- service -------------------------------------------------------------------

    def stats(self) -> Dict[str, Any]:
        """Return ``GET /v1/stats``: documents, verdicts by kind, options, store."""
        result: Dict[str, Any] = self._call("GET", "/v1/stats")
        return result

    def prescreen_filter(self, etag: Optional[str] = None) -> Tuple[Optional[bytes], str]:
        """Download the key filter (``GET /v1/prescreen``): (snapshot bytes, ETag).

        Given the ETag of the snapshot held, returns (None, etag) when the service
        answers 304 Not Modified. ``neardup.prescreen.Prescreen`` keeps one fresh.
        """
        status, hdrs, data = self.request("GET", "/v1/prescreen", etag=etag)
        if status == 304:
            return None, etag or ""
        return data, hdrs.get("etag", "")


def _query(simhash: Optional[str], minhash: Optional[str]) -> Dict[str, str]:
    if not simhash and not minhash:
        raise ValueError("neardup: a fingerprint query needs a simhash, a minhash or both")
    q: Dict[str, str] = {}
    if simhash:
        q["simhash"] = simhash
    if minhash:
        q["minhash"] = minhash
    return q


def _api_error(status: int, data: bytes, method: str, path: str) -> APIError:
    data = data[:_MAX_ERROR_BODY]
    try:
        e = json.loads(data)["error"]
        if isinstance(e, dict) and e.get("code"):
            return APIError(status, str(e["code"]), str(e.get("message", "")), method, path)
    except (ValueError, KeyError, TypeError):
        pass
    text = " ".join(data.decode("utf-8", "replace").split())
    return APIError(status, "", text[:200] + ("..." if len(text) > 200 else ""), method, path)


def _retry_after(status: int, value: str) -> float:
    """Seconds to wait from a 429 or 503's Retry-After (seconds or an HTTP date), or 0."""
    if status not in (429, 503) or not value.strip():
        return 0.0
    v = value.strip()
    if v.isdigit():
        return float(v)
    try:
        when = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError):
        return 0.0
    return max(when.timestamp() - time.time(), 0.0)

