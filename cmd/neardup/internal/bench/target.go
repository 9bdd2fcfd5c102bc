package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// loadTimeout bounds one request; a request that takes longer counts as a transport error.
const loadTimeout = 30 * time.Second

// maxErrorsShown is how many error responses and transport errors a run prints.
const maxErrorsShown = 3

// Target is the service a run talks to: one shared client whose transport keeps a
// keep-alive connection per client goroutine.
type Target struct {
	base   string // --addr without a trailing slash
	token  string
	client *http.Client
	stderr io.Writer
	mu     sync.Mutex   // held while writing to stderr, which clients share
	shown  atomic.Int64 // errors printed so far
	prefix string       // "neardup bench service: "

	httpRequests atomic.Int64 // sent by client, counted by its transport
	raw          rawBase      // where the clients' conns send, when base is plain HTTP
}

// countingTransport counts the requests it sends.
type countingTransport struct {
	http.RoundTripper
	n *atomic.Int64
}

// RoundTrip counts r and sends it.
func (t countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	return t.RoundTripper.RoundTrip(r)
}

// NewTarget returns the service at base (its URL without a trailing slash), sent token
// as a bearer token unless empty, with up to conns keep-alive connections (one a
// client). Errors are printed to stderr, the first few of them. A Target is safe for
// concurrent use by the clients of a run.
func NewTarget(base, token string, conns int, stderr io.Writer) *Target {
	tr := &http.Transport{
		// No proxy: the service is measured, not a proxy on the way to it.
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// Large enough for a batch of 500 documents to go out in few writes.
		WriteBufferSize: 64 << 10,
		ReadBufferSize:  64 << 10,
	}
	t := &Target{base: base, token: token, stderr: stderr, prefix: "neardup bench service: ", raw: parseRawBase(base)}
	t.client = &http.Client{Transport: countingTransport{tr, &t.httpRequests}, Timeout: loadTimeout}
	return t
}

// post sends body to path through the Target's http.Client and reads the whole response
// into resp (so the connection is reused). err is a transport error; a non-2xx status is
// not one. The clients of a run call their conn's post, which comes here for https.
func (t *Target) post(ctx context.Context, path string, body []byte, resp *bytes.Buffer) (status int, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.token != "" {
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	r, err := t.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Reset()
	_, err = resp.ReadFrom(r.Body)
	r.Body.Close()
	return r.StatusCode, err
}

// showError prints one failed request, the first maxErrorsShown of them.
func (t *Target) showError(path string, status int, body []byte, err error) {
	n := t.shown.Add(1)
	if n > maxErrorsShown {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		fmt.Fprintf(t.stderr, "%sPOST %s: %v\n", t.prefix, path, t.describe(err))
	default:
		if len(body) > 300 {
			body = append(body[:300:300], "..."...)
		}
		fmt.Fprintf(t.stderr, "%sPOST %s: HTTP %d: %s\n", t.prefix, path, status, bytes.TrimSpace(body))
	}
	if n == maxErrorsShown {
		fmt.Fprintf(t.stderr, "%sfurther errors are only counted\n", t.prefix)
	}
}

// describe says what to do about a transport error.
func (t *Target) describe(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("no service listens at --addr %s (connection refused); start one with 'neardup serve --data DIR' or point --addr at it", t.base)
	}
	// A batch is answered after its last document: on a service that adds slowly (a
	// Redis store, some 40 ms an add on a loaded machine) a batch of 500 takes longer
	// than the request timeout, as the service's own --timeout does.
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Errorf("no answer within %v: %w; with --batch, a request waits for all its documents: send smaller batches (100 on a Redis store)", t.client.Timeout, err)
	}
	return err
}

// WaitReady checks that a neardup service answers at the address, waiting while it
// reports itself loading (GET /readyz 503).
func (t *Target) WaitReady(ctx context.Context) error {
	said := false
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, t.base+"/readyz", nil)
		r, err := t.client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return t.describe(err)
		}
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		r.Body.Close()
		switch {
		case r.StatusCode == http.StatusOK:
			return nil
		case r.StatusCode != http.StatusServiceUnavailable:
			return fmt.Errorf("GET %s/readyz answered HTTP %d; is --addr a neardup service?", t.base, r.StatusCode)
		case !said:
			fmt.Fprintf(t.stderr, "%swaiting for the service at %s to be ready\n", t.prefix, t.base)
			said = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
