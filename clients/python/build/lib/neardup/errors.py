"""Exceptions of the neardup client."""

from __future__ import annotations

from typing import Optional

__all__ = ["NeardupError", "APIError", "TransportError"]


class NeardupError(Exception):
    """The base of every exception this package raises."""


class APIError(NeardupError):
    """A response with a status other than 2xx (or 304), or one document's error in a batch.

    ``status`` is the HTTP status (0 for one item of a batch answer, which has none);
    ``code`` is the service's error code ("invalid_document", "not_found",
    "overloaded", ...), or "" when the body was not the service's JSON error (a proxy's
    page); ``message`` is the service's message or the start of such a body.
    """

    def __init__(self, status: int, code: str, message: str, method: str = "", path: str = "") -> None:
        self.status = status
        self.code = code
        self.message = message
        self.method = method
        self.path = path
        where = f"{method} {path}: " if method else ""
        st = f"{status} " if status else ""
        super().__init__(f"neardup: {where}{st}{code or 'error'}: {message}" if message else f"neardup: {where}{st}{code}")


class TransportError(NeardupError):
    """The service could not be reached, or the connection failed or timed out.

    ``cause`` is the underlying exception (``OSError``, ``socket.timeout``,
    ``http.client.HTTPException``...).
    """

    def __init__(self, method: str, path: str, cause: Optional[BaseException]) -> None:
        self.method = method
        self.path = path
        self.cause = cause
        super().__init__(f"neardup: {method} {path}: {cause}")
