package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// Defaults of Options.
const (
	DefaultRetries     = 4
	DefaultBackoff     = 50 * time.Millisecond
	DefaultMaxBackoff  = 2 * time.Second
	DefaultBatchSize   = 1000
	DefaultConcurrency = 4
	// MaxRetryAfter is the longest Retry-After the client waits for; a longer one ends
	// the retries with the response's error.
	MaxRetryAfter = time.Minute
)

// Options configure a Client. The zero value is the documented default of every field.
type Options struct {
	// Token is sent as "Authorization: Bearer <Token>"; "" sends none (a server with no
	// tokens configured, on loopback).
	Token string
	// HTTPClient makes the requests; nil means http.DefaultClient. Its Timeout, if any,
	// applies to every attempt; the context of each call bounds all attempts together.
	HTTPClient *http.Client
	// Retries is how many times a failed request is sent again (see Client); 0 means
	// DefaultRetries (4), a negative value none.
	Retries int
	// Backoff and MaxBackoff shape the wait before a retry: a random duration between 0
	// and min(MaxBackoff, Backoff * 2^retry) ("full jitter"), or the response's
	// Retry-After if that is longer. 0 means DefaultBackoff (50ms) and DefaultMaxBackoff
	// (2s).
	Backoff, MaxBackoff time.Duration
	// BatchSize is the most documents or queries one batch request carries; 0 means
	// DefaultBatchSize (1000, the server's default maximum). A server configured with a
	// lower maximum answers 413, and the client then halves the request.
	BatchSize int
	// Concurrency is how many batch requests CheckBatch and QueryBatch have in flight at
	// once; 0 means DefaultConcurrency (4). AddBatch always sends its requests one after
	// another.
	Concurrency int
	// Gzip compresses request bodies of 1 KiB or more (Content-Encoding: gzip, at gzip's
	// fastest level): HTML pages shrink about four times (the AEB pages 4.3 times), for
	// some CPU on both sides. It needs a service that decodes them: one that does not
	// answers 400.
	Gzip bool
}

// Client is a client of the neardup HTTP service (wire API v1). It is safe for
// concurrent use and holds no state besides its options: the connections belong to the
// http.Client.
//
// Every method takes a context, which bounds the call including its retries. A request
// is sent again, up to Options.Retries times, after a transport error or a 429, 502, 503
// or 504 response, waiting as Options.Backoff says and at least the Retry-After of a 429
// or 503 (a client of several replicas, NewReplicas, tries the next one first, with no
// wait); never after another 4xx. A wait that would outlast the context's deadline is
// not started: the call returns the last error at once. Every request the client sends
// can be sent twice safely; what a repeated Add or Delete answers is said at each.
//
// Errors are prefixed "client: ". A response with a non-2xx status is an *APIError
// (errors.As), whether its body is the service's JSON error or a proxy's page.
type Client struct {
	bases []string      // scheme://host[/prefix] of each replica, without a trailing slash
	turn  atomic.Uint64 // the replica the next call starts on, modulo len(bases)
	opt   Options
	hc    *http.Client
	token string
}

// New returns a client of the service at baseURL ("http://localhost:8080", or with a
// path prefix when the service is behind a proxy), or an error for a URL that is not
// absolute http or https or for options out of range.
func New(baseURL string, opt Options) (*Client, error) { return NewReplicas([]string{baseURL}, opt) }

// NewReplicas returns a client of a service that several replicas serve alike (neardup
// serve --redis over one Redis Cluster), each at one of baseURLs, for a fleet with no
// load balancer in front: each call starts on the next replica in turn, and a retry goes
// to the next one, at once while one of them has not been tried in this call, so that a
// replica stopped or killed costs a call a refused connection and no wait. Once every
// replica has failed the call, the client waits as Options.Backoff says before it goes
// round again; Options.Retries counts every attempt after the first. Each URL is checked
// as New checks one.
func NewReplicas(baseURLs []string, opt Options) (*Client, error) {
	if len(baseURLs) == 0 {
		return nil, errors.New("client: no base URL: give the service's, or each replica's")
	}
	bases := make([]string, len(baseURLs))
	for i, b := range baseURLs {
		u, err := url.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("client: base URL: %w", err)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, fmt.Errorf("client: base URL %q: give scheme://host[/prefix] with scheme http or https", b)
		}
		bases[i] = strings.TrimRight(u.String(), "/")
	}
	if opt.Retries == 0 {
		opt.Retries = DefaultRetries
	} else if opt.Retries < 0 {
		opt.Retries = 0
	}
	if opt.Backoff == 0 {
		opt.Backoff = DefaultBackoff
	}
	if opt.MaxBackoff == 0 {
		opt.MaxBackoff = DefaultMaxBackoff
	}
	if opt.BatchSize == 0 {
		opt.BatchSize = DefaultBatchSize
	}
	if opt.Concurrency == 0 {
		opt.Concurrency = DefaultConcurrency
	}
	switch {
	case opt.Backoff < 0 || opt.MaxBackoff < 0:
		return nil, fmt.Errorf("client: Backoff %v and MaxBackoff %v: give durations >= 0", opt.Backoff, opt.MaxBackoff)
	case opt.BatchSize < 0:
		return nil, fmt.Errorf("client: BatchSize %d: give 1 or more, or 0 for %d", opt.BatchSize, DefaultBatchSize)
	case opt.Concurrency < 0:
		return nil, fmt.Errorf("client: Concurrency %d: give 1 or more, or 0 for %d", opt.Concurrency, DefaultConcurrency)
	case strings.ContainsAny(opt.Token, "\r\n"):
		return nil, errors.New("client: Token contains a line break")
	}
	hc := opt.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{bases: bases, opt: opt, hc: hc, token: opt.Token}, nil
}

// request is one call's request, sent as many times as retries need.
type request struct {
	method, path string
	body         []byte // JSON, nil for none
	gzipped      bool   // body is gzip-compressed JSON
	etag         string // If-None-Match
}

// gzipMin is the smallest body Options.Gzip compresses: below it the gzip header and
// the CPU are not worth the bytes saved.
const gzipMin = 1 << 10

// do sends the request with retries and returns a response with a 2xx or 304 status,
// whose body the caller closes, or an error.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	n := uint64(len(c.bases))
	first := c.turn.Add(1) - 1
	var wait time.Duration // the longest Retry-After of this round of the replicas
	for retry := 0; ; retry++ {
		resp, err := c.send(ctx, c.bases[(first+uint64(retry))%n], r)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, context.Cause(ctx))
			}
			err = fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
		case resp.StatusCode/100 == 2 || resp.StatusCode == http.StatusNotModified:
			return resp, nil
		default:
			err = readError(resp)
			wait = max(wait, retryAfter(resp))
			if !retryStatus(resp.StatusCode) {
				return nil, err
			}
		}
		if retry >= c.opt.Retries || wait > MaxRetryAfter {
			return nil, err
		}
		if uint64(retry+1)%n != 0 {
			continue // a replica this round has not tried yet
		}
		wait = max(wait, c.backoff(retry/int(n)))
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			return nil, err // waiting would only end in the deadline
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("client: %s %s: %w, after: %w", r.method, r.path, context.Cause(ctx), err)
		case <-t.C:
		}
		wait = 0
	}
}

// send makes one attempt, to the replica at base.
func (c *Client) send(ctx context.Context, base string, r request) (*http.Response, error) {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, base+r.path, body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.gzipped {
		req.Header.Set("Content-Encoding", "gzip")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if r.etag != "" {
		req.Header.Set("If-None-Match", r.etag)
	}
	return c.hc.Do(req)
}

// retryStatus reports whether a response with the status is worth sending again: the
// service is overloaded, not ready or stopping, or a proxy could not reach it.
func retryStatus(status int) bool {
	switch status {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// backoff returns the wait before the retry: full jitter over an exponential cap.
func (c *Client) backoff(retry int) time.Duration {
	ceil := c.opt.MaxBackoff
	if retry < 32 {
		ceil = min(ceil, c.opt.Backoff<<retry)
	}
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil + 1)
}

// retryAfter returns the Retry-After of a 429 or 503 response (seconds or an HTTP date),
// or 0.
func retryAfter(resp *http.Response) time.Duration {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, int64(MaxRetryAfter/time.Second)+1)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 64 << 10

// readError reads and closes a non-2xx response and returns its *APIError.
func readError(resp *http.Response) error {
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody)) // so the connection can be reused
	e := &APIError{Status: resp.StatusCode}
	var body struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(b, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e.Code, e.Message = body.Error.Code, body.Error.Message
		return e
	}
	e.Message = excerpt(b)
	return e
}

// excerpt returns the start of a body that is not the service's JSON, on one line.
func excerpt(b []byte) string {
	const n = 200
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(b), "\uFFFD")), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// wireError is the service's JSON error.
type wireError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// item returns the error of one item of a batch answer, which has no status of its own.
func (e *wireError) item() *APIError { return &APIError{Code: e.Code, Message: e.Message} }

// marshal is json.Marshal without its escapes of "<", ">" and "&", which a page of HTML
// has by the thousand: each would cost five more bytes to send and an escape for the
// service to decode.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// call sends a JSON request (in, nil for none) and decodes a 2xx JSON answer into out.
func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	r := request{method: method, path: path}
	if in != nil {
		b, err := marshal(in)
		if err != nil {
			return fmt.Errorf("client: %s %s: %w", method, path, err)
		}
		r.body = b
		if c.opt.Gzip && len(b) >= gzipMin {
			var z bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&z, gzip.BestSpeed) // the level is valid
			zw.Write(b)                                      // a bytes.Buffer does not fail
			zw.Close()
			r.body, r.gzipped = z.Bytes(), true
		}
	}
	resp, err := c.do(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: %s %s: reading the answer: %w", method, path, err)
	}
	io.Copy(io.Discard, resp.Body)
	return nil
}
