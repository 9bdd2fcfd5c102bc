package client

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/neardup/neardup"
)

// TestKeyFilter: a download, a 304 for the same ETag that returns no body, and a new
// download once the filter changed; the bytes are a filter the root package reads.
func TestKeyFilter(t *testing.T) {
	ctx := context.Background()
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, fast)
	f.d.Check(article("a", "http://example.com/a", 1))
	body, etag, err := c.KeyFilter(ctx, "")
	if err != nil || body == nil || etag == "" {
		t.Fatalf("first download: %v, body %v, ETag %q", err, body != nil, etag)
	}
	kf, err := neardup.ReadKeyFilter(body)
	body.Close()
	if err != nil || kf.Len() != 2 || !kf.HasURL("http://example.com/a") {
		t.Fatalf("the filter: %v, %d keys", err, kf.Len())
	}
	body, etag2, err := c.KeyFilter(ctx, etag)
	if err != nil || body != nil || etag2 != etag || f.notMod.Load() != 1 {
		t.Fatalf("unchanged: %v, body %v, ETag %q, %d 304s", err, body != nil, etag2, f.notMod.Load())
	}
	f.d.Check(article("b", "http://example.com/b", 2))
	body, etag2, err = c.KeyFilter(ctx, etag)
	if err != nil || body == nil || etag2 == etag || f.full.Load() != 2 {
		t.Fatalf("changed: %v, body %v, ETag %q, %d downloads", err, body != nil, etag2, f.full.Load())
	}
	body.Close()

	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		writeError(w, 403, "forbidden", "no read scope")
		return true
	})
	var api *APIError
	if _, _, err := c.KeyFilter(ctx, ""); !errors.As(err, &api) || api.Status != 403 {
		t.Errorf("refused: %v", err)
	}
}
