"""A Python client of the neardup near-duplicate detection service.

Standard library only. :class:`Client` speaks the service's HTTP API (add, check,
batch, get, delete, fingerprint queries, stats, the pre-screen filter) with bearer
tokens, timeouts and retries; :class:`Prescreen` answers "is this URL certainly new?"
locally from the service's key filter; :mod:`neardup.scrapy` plugs both into Scrapy.

    >>> from neardup import Client, Document
    >>> c = Client("http://127.0.0.1:8080")              # doctest: +SKIP
    >>> c.add(Document(id="a", url="https://example.com/", html="<p>Hi</p>")).verdict  # doctest: +SKIP
    'unique'
"""

from .client import BatchResult, Client, Document, Match, QueryResult, Verdict, VERDICTS
from .errors import APIError, NeardupError, TransportError
from .keyfilter import FilterError, KeyFilter
from .prescreen import Info, Prescreen
from .urlkey import Canonicalizer, canonical_url

__version__ = "0.1.0"

__all__ = [
    "APIError",
    "BatchResult",
    "Canonicalizer",
    "Client",
    "Document",
    "FilterError",
    "Info",
    "KeyFilter",
    "Match",
    "NeardupError",
    "Prescreen",
    "QueryResult",
    "TransportError",
    "VERDICTS",
    "Verdict",
    "canonical_url",
]
