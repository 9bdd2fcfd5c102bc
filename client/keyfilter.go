package client

import (
	"context"
	"io"
	"net/http"
)

// KeyFilter downloads the service's key filter (GET /v1/prescreen): the snapshot's
// bytes, which neardup.ReadKeyFilter reads, and its ETag. Given the ETag of the
// snapshot the caller holds, it returns a nil body and that ETag when the service
// answers 304 Not Modified. The caller closes a non-nil body. It retries as every call
// does; package client/prescreen builds the crawler-side pre-screen on it, which is
// kept out of this package because computing a page's keys needs the extractor.
func (c *Client) KeyFilter(ctx context.Context, etag string) (body io.ReadCloser, newETag string, err error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: "/v1/prescreen", etag: etag})
	if err != nil {
		return nil, "", err
	}
	if resp.StatusCode == http.StatusNotModified {
		resp.Body.Close()
		return nil, etag, nil
	}
	return resp.Body, resp.Header.Get("ETag"), nil
}
