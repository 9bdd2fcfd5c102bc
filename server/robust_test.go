package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostile sends bodies and requests no client should, and checks that each gets a
// 4xx and that the server answers normally afterwards.
func TestHostile(t *testing.T) {
	_, ts := start(t, Config{MaxBody: 4096})
	bodies := []string{
		"", "null", "[]", "{", `{"id":1}`, `{"id":"a","text":"\xff\xfe"}`, `{"id":"a","extra":1}`,
		`{"id":"a"} {"id":"b"}`, `{"id":"a","fetch_time":"2024-13-45"}`, `{"id":"` + strings.Repeat("x", 2000) + `"}`,
		`{"id":"a","html":"<p>x</p>","text":"x"}`, `{"id":"a","url":"http://[::1"}`, `{"id":"a","priority":"high"}`,
		`{"id":"a","html_base64":"not base64!"}`, `{"id":"a","html_base64":"PHA+eDwvcD4=","html":"<p>x</p>"}`,
		strings.Repeat("[", 5000), `{"id":"a","text":"` + strings.Repeat("y", 5000) + `"}`, "\x00\x01\x02",
		`{"documents":"x"}`, `{"documents":[1,2]}`, `{"simhash":"xyz"}`, `{"simhash":"0123456789abcdeg"}`, `{"minhash":"abc"}`,
		`{"simhash":"-123456789abcdef"}`, `{"a":1}`, `{}`,
	}
	paths := []string{"/v1/documents", "/v1/check", "/v1/documents:batch", "/v1/fingerprints/query", "/v1/fingerprints/query:batch", "/v1/compare"}
	for _, path := range paths {
		for _, b := range bodies {
			code, body, _ := call(t, ts, "POST", path, "", b)
			if code == 200 {
				continue // {} compares two empty texts, and so on
			}
			if code < 400 || code >= 500 {
				t.Errorf("POST %s %.60q: %d %s", path, b, code, body)
			}
		}
	}
	// A malformed document in a batch is answered in its result; a malformed batch is 400.
	for _, b := range []string{`{"documents":[1]}`, `{"documents":[{"id":"a","bogus":true}]}`} {
		code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", b)
		if code != 200 || !bytes.Contains(body, []byte(`{"results":[{"error":{"code":"invalid_json"`)) {
			t.Errorf("batch %q: %d %s", b, code, body)
		}
	}
	code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", `{"documents":[],"bogus":1}`)
	wantError(t, "batch with an unknown field", code, body, 400, "invalid_json")
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", `{"id":"a","text":"`+strings.Repeat("y", 5000)+`"}`)
	wantError(t, "body over MaxBody", code, body, 413, "too_large")
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", `{"id":"a","text":"\xff"}`)
	wantError(t, "bad UTF-8", code, body, 400, "invalid_json")
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", `{"id":"a","txt":"x"}`)
	wantError(t, "unknown field", code, body, 400, "invalid_json")
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", `{"text":"x"}`)
	wantError(t, "no id", code, body, 400, "invalid_document")
	code, body, _ = call(t, ts, "POST", "/v1/documents", "", `{"id":"a","html":"\u0000\u0001\u0002\u0003 binary \u0004\u0005\u0006"}`)
	wantError(t, "binary html", code, body, 400, "invalid_document")
	if !strings.Contains(string(body), "binary content") {
		t.Errorf("binary html: %s does not say why", body)
	}
	code, body, _ = call(t, ts, "GET", "/?a=%zz", "", "")
	if code != 400 {
		t.Errorf("bad form: %d %s", code, body)
	}
	// Bodies without a length (chunked: the client cannot tell a MultiReader's) are read
	// up to MaxBody too; one shorter than its Content-Length is a bad request.
	for _, tc := range []struct {
		body       string
		wantStatus int
	}{{`{"id":"a","text":"x"}`, 200}, {`{"id":"a","text":"` + strings.Repeat("y", 5000) + `"}`, 413}} {
		resp, err := ts.Client().Post(ts.URL+"/v1/check", "application/json", io.MultiReader(strings.NewReader(tc.body)))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.wantStatus {
			t.Errorf("chunked body of %d bytes: %d, want %d", len(tc.body), resp.StatusCode, tc.wantStatus)
		}
	}
	shortBody(t, ts)
	if code, body, _ := call(t, ts, "POST", "/v1/documents", "", docJSON("ok", "", article)); code != 200 {
		t.Errorf("after the hostile requests: %d %s", code, body)
	}
}

// shortBody checks that the server at ts answers a body shorter than its
// Content-Length with 400.
func shortBody(t *testing.T, ts *httptest.Server) {
	t.Helper()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"id\":\"a\"")
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	wantError(t, "a body shorter than its Content-Length", resp.StatusCode, b, 400, "bad_request")
}

// blocker holds every request's work until released.
type blocker struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}, 16), release: make(chan struct{})}
}

func (b *blocker) hook() {
	b.started <- struct{}{}
	<-b.release
}

func (b *blocker) open() { b.once.Do(func() { close(b.release) }) }

// TestInvalidURL checks that a document whose URL the WHATWG URL Standard rejects is a 400
// naming the URL, alone or in a batch, and never gets a URL key.
func TestInvalidURL(t *testing.T) {
	_, ts := start(t, Config{})
	for _, u := range []string{"http://example example.com/", "http://256.256.256.256/", "http://[::1.2.3.]/", "../relative"} {
		for _, path := range []string{"/v1/documents", "/v1/check"} {
			code, body, _ := call(t, ts, "POST", path, "", docJSON("a", u, "some text"))
			wantError(t, path+" "+u, code, body, 400, "invalid_document")
			if !strings.Contains(string(body), strconv.Quote(u)[1:len(strconv.Quote(u))-1]) || !strings.Contains(string(body), "invalid URL") {
				t.Errorf("POST %s with url %q: %s does not name the URL", path, u, body)
			}
		}
		code, body, _ := call(t, ts, "POST", "/v1/documents:batch", "", `{"documents":[`+docJSON("b", u, "x")+`,`+docJSON("c", "http://ok.example/", "y")+`]}`)
		if code != 200 || !strings.Contains(string(body), `{"results":[{"error":{"code":"invalid_document","message":`) ||
			!strings.Contains(string(body), "invalid URL") || !strings.Contains(string(body), `{"verdict":{"id":"c"`) {
			t.Errorf("batch with url %q: %d %s", u, code, body)
		}
	}
}

func TestOverloaded(t *testing.T) {
	s, ts := start(t, Config{MaxInflight: 1, QueueWait: 10 * time.Millisecond})
	b := newBlocker()
	defer b.open()
	s.beforeWork = b.hook
	done := make(chan int)
	go func() {
		resp, err := ts.Client().Post(ts.URL+"/v1/check", "application/json", strings.NewReader(docJSON("a", "", "x")))
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-b.started
	code, body, h := call(t, ts, "POST", "/v1/check", "", docJSON("b", "", "y"))
	wantError(t, "second request", code, body, 429, "overloaded")
	if h.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	b.open()
	if code := <-done; code != 200 {
		t.Errorf("first request: %d", code)
	}
	if _, body, _ := call(t, ts, "GET", "/metrics", "", ""); !bytes.Contains(body, []byte("neardup_http_rejected_total 1")) {
		t.Error("metrics do not count the rejected request")
	}
}

func TestTimeout(t *testing.T) {
	s, ts := start(t, Config{Timeout: 50 * time.Millisecond})
	b := newBlocker()
	s.beforeWork = b.hook
	code, body, _ := call(t, ts, "POST", "/v1/check", "", docJSON("a", "", "x"))
	wantError(t, "blocked request", code, body, 503, "timeout")
	b.open()
	// The abandoned work finishes and frees its slot; Shutdown waits for it.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestShutdown checks that a request in flight when Shutdown starts is answered, that
// new connections are refused, and that Serve then returns nil.
func TestShutdown(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.SetDetector(newDetector(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error)
	go func() { served <- s.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	b := newBlocker()
	s.beforeWork = b.hook
	inflight := make(chan int)
	go func() {
		resp, err := http.Post(url+"/v1/documents", "application/json", strings.NewReader(docJSON("a", "", article)))
		if err != nil {
			t.Error(err)
			inflight <- 0
			return
		}
		resp.Body.Close()
		inflight <- resp.StatusCode
	}()
	<-b.started
	stopped := make(chan error)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	// Shutdown closes the listener before it waits for the request.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections after Shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Shutdown returned %v with a request in flight", err)
	default:
	}
	b.open()
	if code := <-inflight; code != 200 {
		t.Errorf("in-flight request: %d", code)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestServeRefusesOpenNetwork(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	if err := s.Serve(ln); !errors.Is(err, ErrNoTokens) || !strings.Contains(err.Error(), "--tokens") {
		t.Errorf("Serve on 0.0.0.0 without tokens: %v", err)
	}
}
