// Package python holds no Go code of its own: its tests run the Python client's unit
// tests (clients/python/tests) and a real Scrapy crawl with the neardup components
// against a real neardup serve, so that go test ./... covers the Python client.
package python
