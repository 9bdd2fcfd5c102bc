"""The client against the service's OpenAPI document (server/openapi.json): every path,
method and field the client sends or reads exists there, so that an API change that
breaks the client fails this test."""

from __future__ import annotations

import dataclasses
import json
import os
import unittest
from typing import Any, Dict

from neardup import Document, Match, Verdict

HERE = os.path.dirname(os.path.abspath(__file__))
OPENAPI = os.path.join(HERE, "..", "..", "..", "server", "openapi.json")

# What the client calls: (method, path, request schema or None, response schema or None).
CALLS = [
    ("post", "/v1/documents", "Document", "Verdict"),
    ("post", "/v1/check", "Document", "Verdict"),
    ("post", "/v1/documents:batch", "Batch", "BatchResults"),
    ("get", "/v1/documents/{id}", None, "StoredDocument"),
    ("delete", "/v1/documents/{id}", None, "Deleted"),
    ("post", "/v1/fingerprints/query", "FingerprintQuery", "Matches"),
    ("post", "/v1/fingerprints/query:batch", "FingerprintQueryBatch", "FingerprintQueryResults"),
    ("get", "/v1/stats", None, "Stats"),
    ("get", "/v1/prescreen", None, None),
]

# The error codes the client and the Scrapy integration act on.
CODES = {"not_found", "overloaded", "not_ready", "invalid_document", "too_many_documents"}


def load() -> Dict[str, Any]:
    if not os.path.exists(OPENAPI):
        if os.environ.get("CI") == "true":
            raise AssertionError(f"{OPENAPI} is missing")
        raise unittest.SkipTest(f"{OPENAPI} is missing: run the tests from the repository")
    with open(OPENAPI, encoding="utf-8") as f:
        return json.load(f)


def ref(doc: Dict[str, Any], schema: Dict[str, Any]) -> Dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


class OpenAPITest(unittest.TestCase):
    doc: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.doc = load()

    def schema(self, name: str) -> Dict[str, Any]:
        return self.doc["components"]["schemas"][name]

    def props(self, name: str) -> Dict[str, Any]:
        return self.schema(name)["properties"]

    def test_paths_and_schemas(self) -> None:
        for method, path, req, resp in CALLS:
            op = self.doc["paths"].get(path, {}).get(method)
            self.assertIsNotNone(op, f"{method.upper()} {path} is gone from the API")
            if req:
                got = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
                self.assertTrue(got.endswith("/" + req), f"{path}: request is {got}")
            if resp:
                got = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                self.assertTrue(got.endswith("/" + resp), f"{path}: response is {got}")

    def test_document_fields(self) -> None:
        props = self.props("Document")
        sent = {f.name for f in dataclasses.fields(Document)} - {"html"} | {"html", "html_base64"}
        for name in sent:
            self.assertIn(name, props, f"Document.{name}")
        self.assertEqual(set(self.schema("Document")["required"]), {"id"})

    def test_verdict_and_match_fields(self) -> None:
        for cls, name in ((Verdict, "Verdict"), (Match, "Match")):
            props = self.props(name)
            for f in dataclasses.fields(cls):
                self.assertIn(f.name, props, f"{name}.{f.name}")
            for r in self.schema(name)["required"]:
                self.assertIn(r, {f.name for f in dataclasses.fields(cls)}, f"{name} requires {r}")
        kinds = set(self.schema("Kind")["enum"])
        from neardup import VERDICTS

        self.assertEqual(kinds, set(VERDICTS))

    def test_batch_and_query_fields(self) -> None:
        self.assertEqual(set(self.props("Batch")), {"documents", "add"})
        item = self.props("BatchResults")["results"]["items"]["properties"]
        self.assertEqual(set(item), {"verdict", "error"})
        self.assertLessEqual({"simhash", "minhash"}, set(self.props("FingerprintQuery")))
        self.assertIn("queries", self.props("FingerprintQueryBatch"))
        self.assertIn("matches", self.props("Matches"))
        self.assertLessEqual({"matches", "error"}, set(self.props("FingerprintQueryResults")["results"]["items"]["properties"]))
        self.assertIn("deleted", self.props("Deleted"))
        self.assertLessEqual({"simhash", "minhash"}, set(self.props("StoredDocument")))

    def test_error_codes(self) -> None:
        codes = set(self.props("ErrorDetail")["code"]["enum"])
        self.assertLessEqual(CODES, codes)
        self.assertEqual(set(self.schema("ErrorDetail")["required"]), {"code", "message"})

    def test_prescreen_etag(self) -> None:
        op = self.doc["paths"]["/v1/prescreen"]["get"]
        self.assertIn("ETag", op["responses"]["200"]["headers"])
        self.assertIn("304", op["responses"])
        self.assertIn("If-None-Match", [p["name"] for p in op.get("parameters", [])])

    def test_retry_statuses_are_documented(self) -> None:
        # The client retries 429 and 503 honouring Retry-After.
        op = self.doc["paths"]["/v1/documents"]["post"]["responses"]
        self.assertIn("429", op)
        self.assertIn("503", op)


if __name__ == "__main__":
    unittest.main()
