"""The client against a scripted HTTP server on loopback: retries, Retry-After, timeouts,
tokens, gzip and the service's error codes."""

from __future__ import annotations

import gzip
import json
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, List, Tuple

from neardup import APIError, Client, Document, TransportError

Reply = Tuple[int, dict, bytes]


class Script:
    """Answers requests with the replies queued, recording each request."""

    def __init__(self) -> None:
        self.replies: List[Callable[[], Reply]] = []
        self.requests: List[Tuple[str, str, dict, bytes, float]] = []


def serve(script: Script) -> Tuple[ThreadingHTTPServer, str]:
    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def handle_one(self) -> None:
            n = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(n)
            script.requests.append((self.command, self.path, dict(self.headers), body, time.monotonic()))
            status, headers, data = script.replies.pop(0)()
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client timed out and hung up, as the timeout test wants

        do_GET = do_POST = do_DELETE = handle_one

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def js(status: int, obj: Any, **headers: str) -> Callable[[], Reply]:
    h = {"Content-Type": "application/json"}
    h.update({k.replace("_", "-"): v for k, v in headers.items()})
    return lambda: (status, h, json.dumps(obj).encode())


def err(status: int, code: str, **headers: str) -> Callable[[], Reply]:
    return js(status, {"error": {"code": code, "message": "m"}}, **headers)


VERDICT = {"id": "a", "verdict": "unique", "survivor": "a", "added": True, "url": "http://example.com/"}


class ClientTest(unittest.TestCase):
    def setUp(self) -> None:
        self.script = Script()
        self.srv, self.url = serve(self.script)
        self.addCleanup(self.srv.shutdown)
        self.addCleanup(self.srv.server_close)

    def client(self, **kw: Any) -> Client:
        c = Client(self.url, **kw)
        self.addCleanup(c.close)
        return c

    def test_add_sends_token_and_json(self) -> None:
        self.script.replies.append(js(200, VERDICT))
        c = self.client(token="tok")
        v = c.add(Document(id="a", url="http://example.com/", html=b"<p>caf\xc3\xa9</p>", priority=2))
        self.assertEqual(v.verdict, "unique")
        method, path, headers, body, _ = self.script.requests[0]
        self.assertEqual((method, path), ("POST", "/v1/documents"))
        self.assertEqual(headers["Authorization"], "Bearer tok")
        self.assertEqual(json.loads(body), {"id": "a", "url": "http://example.com/", "html": "<p>café</p>", "priority": 2})

    def test_non_utf8_html_goes_as_base64(self) -> None:
        self.script.replies.append(js(200, VERDICT))
        self.client().check(Document(id="a", html=b"<p>caf\xe9</p>", content_type="text/html; charset=latin-1"))
        body = json.loads(self.script.requests[0][3])
        self.assertEqual(body["html_base64"], "PHA+Y2Fm6TwvcD4=")
        self.assertNotIn("html", body)

    def test_gzip(self) -> None:
        self.script.replies.append(js(200, VERDICT))
        self.client(gzip=True).add(Document(id="a", text="word " * 1000))
        _, _, headers, body, _ = self.script.requests[0]
        self.assertEqual(headers["Content-Encoding"], "gzip")
        self.assertEqual(json.loads(gzip.decompress(body))["text"], "word " * 1000)

    def test_retry_after_is_honoured(self) -> None:
        self.script.replies += [err(429, "overloaded", Retry_After="1"), js(200, VERDICT)]
        c = self.client(backoff=0.001, max_backoff=0.001)
        c.add(Document(id="a", text="x"))
        t = [r[4] for r in self.script.requests]
        self.assertEqual(len(t), 2)
        self.assertGreaterEqual(t[1] - t[0], 0.95)

    def test_retries_503_then_gives_up_with_the_code(self) -> None:
        self.script.replies += [err(503, "not_ready")] * 3
        c = self.client(retries=2, backoff=0.001, max_backoff=0.002)
        with self.assertRaises(APIError) as cm:
            c.check(Document(id="a", text="x"))
        self.assertEqual((cm.exception.status, cm.exception.code), (503, "not_ready"))
        self.assertEqual(len(self.script.requests), 3)

    def test_long_retry_after_ends_retries(self) -> None:
        self.script.replies += [err(429, "overloaded", Retry_After="3600")]
        with self.assertRaises(APIError) as cm:
            self.client().check(Document(id="a", text="x"))
        self.assertEqual(cm.exception.code, "overloaded")
        self.assertEqual(len(self.script.requests), 1)

    def test_400_is_not_retried(self) -> None:
        self.script.replies += [err(400, "invalid_document")]
        with self.assertRaises(APIError) as cm:
            self.client().add(Document(id="a"))
        self.assertEqual((cm.exception.status, cm.exception.code), (400, "invalid_document"))
        self.assertEqual(len(self.script.requests), 1)

    def test_proxy_page_error(self) -> None:
        self.script.replies += [lambda: (502, {"Content-Type": "text/html"}, b"<h1>Bad   gateway</h1>")]
        with self.assertRaises(APIError) as cm:
            self.client(retries=0).stats()
        self.assertEqual((cm.exception.status, cm.exception.code), (502, ""))
        self.assertIn("Bad gateway", cm.exception.message)

    def test_timeout(self) -> None:
        def slow() -> Reply:
            time.sleep(0.5)
            return 200, {}, b"{}"

        self.script.replies += [slow, slow]
        c = self.client(timeout=0.1, retries=1, backoff=0.001)
        start = time.monotonic()
        with self.assertRaises(TransportError):
            c.stats()
        self.assertLess(time.monotonic() - start, 0.45)

    def test_get_and_delete_missing(self) -> None:
        self.script.replies += [err(404, "not_found"), err(404, "not_found"), js(200, {"id": "a/b", "deleted": True})]
        c = self.client()
        self.assertIsNone(c.get("x"))
        self.assertFalse(c.delete("x"))
        self.assertTrue(c.delete("a/b"))
        self.assertEqual(self.script.requests[2][1], "/v1/documents/a%2Fb")

    def test_batch_halves_on_413_and_keeps_item_errors(self) -> None:
        docs = [Document(id=str(i), text="x") for i in range(4)]

        def results(n: int) -> Callable[[], Reply]:
            return js(200, {"results": [{"verdict": dict(VERDICT, id=str(i))} for i in range(n - 1)]
                            + [{"error": {"code": "duplicate_id", "message": "m"}}]})

        self.script.replies += [err(413, "too_many_documents"), results(2), results(2)]
        out = self.client(batch_size=4).batch(docs)
        self.assertEqual(len(out), 4)
        self.assertEqual(out[1].error.code, "duplicate_id")  # type: ignore[union-attr]
        self.assertEqual(len(json.loads(self.script.requests[1][3])["documents"]), 2)

    def test_prescreen_filter_etag(self) -> None:
        self.script.replies += [lambda: (200, {"ETag": '"e1"'}, b"bytes"), lambda: (304, {"ETag": '"e1"'}, b"")]
        c = self.client()
        self.assertEqual(c.prescreen_filter(), (b"bytes", '"e1"'))
        self.assertEqual(c.prescreen_filter('"e1"'), (None, '"e1"'))
        self.assertEqual(self.script.requests[1][2]["If-None-Match"], '"e1"')

    def test_bad_base_url(self) -> None:
        with self.assertRaises(ValueError):
            Client("127.0.0.1:8080")


if __name__ == "__main__":
    unittest.main()
