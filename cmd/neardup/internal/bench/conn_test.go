package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestConnHTTP posts through a conn to a net/http server that answers as the service's
// handlers may: small bodies with a length, large ones chunked, and "Connection: close",
// after which the conn dials again. The request carries the path under the base URL's
// prefix, the token and the body as sent.
func TestConnHTTP(t *testing.T) {
	var conns atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "bad request head", http.StatusBadRequest)
			return
		}
		switch r.URL.Path {
		case "/svc/small":
			w.Write(body)
		case "/svc/large":
			for range 1000 {
				w.Write(body) // past net/http's buffer: chunked
			}
		case "/svc/close":
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusTeapot)
			w.Write(body)
		default:
			http.NotFound(w, r)
		}
	}))
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()
	target := NewTarget(ts.URL+"/svc/", "tok", 1, io.Discard)
	if !target.raw.ok {
		t.Fatalf("%s is not plain HTTP to a conn", ts.URL)
	}
	var c conn
	defer c.close()
	var resp bytes.Buffer
	for _, tc := range []struct {
		path   string
		body   string
		status int
		want   string
		conns  int64
	}{
		{"/small", `{"a":1}`, 200, `{"a":1}`, 1},
		{"/large", "0123456789", 200, strings.Repeat("0123456789", 1000), 1},
		{"/small", "", 200, "", 1},
		{"/close", "x", http.StatusTeapot, "x", 1},
		{"/small", "after", 200, "after", 2},
		{"/missing", "y", 404, "404 page not found\n", 2},
	} {
		status, err := c.post(context.Background(), target, tc.path, []byte(tc.body), &resp)
		if err != nil || status != tc.status || resp.String() != tc.want || conns.Load() != tc.conns {
			t.Fatalf("POST %s: status %d, err %v, body %.60q, %d connections; want %d, %.60q, %d", tc.path, status, err, resp.String(), conns.Load(), tc.status, tc.want, tc.conns)
		}
	}
}

// TestConnRetry: a service that closes a kept-alive connection without saying so
// (an idle timeout as the request went out) costs the request a second connection, not
// an error; a connection that fails on its first request is an error.
func TestConnRetry(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var accepted atomic.Int64
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			// Each connection answers one request, and the one after the third
			// connection none.
			n := accepted.Add(1)
			go func() {
				defer nc.Close()
				req, err := http.ReadRequest(bufio.NewReader(nc))
				if err != nil || n > 3 {
					return
				}
				io.Copy(io.Discard, req.Body)
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}()
		}
	}()
	target := NewTarget("http://"+l.Addr().String(), "", 1, io.Discard)
	var c conn
	defer c.close()
	var resp bytes.Buffer
	for i := range 3 {
		status, err := c.post(context.Background(), target, "/v1/documents", []byte("{}"), &resp)
		if err != nil || status != 200 || resp.String() != "ok" || accepted.Load() != int64(i+1) {
			t.Fatalf("request %d: status %d, err %v, body %q, %d connections", i, status, err, resp.String(), accepted.Load())
		}
	}
	// The fourth request: the third connection is closed, and the fourth answers
	// nothing; the conn gives up after that one retry.
	if _, err := c.post(context.Background(), target, "/v1/documents", []byte("{}"), &resp); err == nil || accepted.Load() != 4 {
		t.Fatalf("a service that answers nothing: err %v after %d connections, want an error after 4", err, accepted.Load())
	}
	if _, err := c.post(context.Background(), target, "/v1/documents", []byte("{}"), &resp); err == nil || accepted.Load() != 5 {
		t.Fatalf("a new connection that fails: err %v after %d connections, want an error after 5 (no retry)", err, accepted.Load())
	}
}

// TestConnInterrupt: ending the context interrupts a request the service does not
// answer, promptly, with the context's error.
func TestConnInterrupt(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer ts.Close()
	defer close(release)
	target := NewTarget(ts.URL, "", 1, io.Discard)
	var c conn
	defer c.close()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.post(ctx, target, "/slow", []byte("{}"), new(bytes.Buffer))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 10*time.Second {
		t.Fatalf("err %v after %v, want the context's deadline", err, time.Since(start))
	}
	if _, err := c.post(ctx, target, "/slow", nil, new(bytes.Buffer)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a request after the end: %v", err)
	}
}

// TestParseRawBase: plain-HTTP base URLs go to a conn, with the port and path prefix
// they name; others (https, credentials, a query) to the http.Client.
func TestParseRawBase(t *testing.T) {
	for _, tc := range []struct {
		base string
		want rawBase
	}{
		{"http://127.0.0.1:8080", rawBase{true, "127.0.0.1:8080", "127.0.0.1:8080", ""}},
		{"http://localhost", rawBase{true, "localhost:80", "localhost", ""}},
		{"http://[::1]:9/neardup/", rawBase{true, "[::1]:9", "[::1]:9", "/neardup"}},
		{"https://127.0.0.1:8443", rawBase{}},
		{"http://u:p@127.0.0.1", rawBase{}},
		{"http://127.0.0.1?x=1", rawBase{}},
	} {
		if got := parseRawBase(tc.base); got != tc.want {
			t.Errorf("parseRawBase(%q) = %+v, want %+v", tc.base, got, tc.want)
		}
	}
}
