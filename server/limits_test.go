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
	"os"
	"strings"
	"testing"
	"time"
)

// jsonPaths are the endpoints that decode a JSON body.
var jsonPaths = []string{"/v1/documents", "/v1/check", "/v1/documents:batch", "/v1/fingerprints/query", "/v1/fingerprints/query:batch", "/v1/compare"}

// deepBodies returns bodies nesting n levels deep, bare and under fields the endpoints
// know, and unterminated.
func deepBodies(n int) []string {
	open := strings.Repeat("[", n)
	objs := strings.Repeat(`{"a":`, n)
	return []string{
		open, open + strings.Repeat("]", n), objs,
		`{"id":"a","text":` + open, `{"documents":[{"id":"a","text":` + open,
		`{"queries":[` + open, `{"a":` + open, `{"simhash":` + objs,
	}
}

// TestDeepNesting sends a million levels of nesting to every JSON endpoint: each is a
// 400 too_deep, and the process lives (fastjson's validator recursed once a level and
// overflowed the stack). Brackets inside strings do not count.
func TestDeepNesting(t *testing.T) {
	_, ts := start(t, Config{})
	for _, path := range jsonPaths {
		for _, b := range deepBodies(1_000_000) {
			code, body, _ := call(t, ts, "POST", path, "", b)
			wantError(t, fmt.Sprintf("POST %s %.30q...", path, b), code, body, 400, "too_deep")
		}
	}
	for _, b := range deepBodies(maxDepth + 1) {
		if !tooDeep([]byte(b)) {
			t.Errorf("%.40q... nests %d deep: not refused", b, maxDepth+1)
		}
	}
	inString := `{"id":"a","text":"` + strings.Repeat(`[{\"`, 100_000) + `"}`
	if code, body, _ := call(t, ts, "POST", "/v1/check", "", inString); code != 200 {
		t.Errorf("brackets in a string: %d %.200s", code, body)
	}
	for _, b := range []string{
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth),
		`{"documents":[{"id":"a","text":"x"}]}`, `"\"[[[["`, `"\\" [[`,
	} {
		if tooDeep([]byte(b)) {
			t.Errorf("%.60q refused as too deep", b)
		}
	}
	if !tooDeep([]byte(`"\\"` + strings.Repeat("[", maxDepth+1))) {
		t.Error("an escaped backslash before a string's end hid the nesting after it")
	}
}

// rawRequest writes a request's head to a new connection to addr, with the body's first
// part; the caller sends the rest or not.
func rawRequest(t *testing.T, addr, method, path string, length int, first string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", method, path, length, first)
	return c
}

// readAnswer reads one response from c within 5 s.
func readAnswer(t *testing.T, c net.Conn) (int, []byte, http.Header) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// TestBodyMemory holds the body memory with one slow upload and checks that another
// body waits, then is 429 with Retry-After, that a body announced over MaxBody is 413
// before it is sent, and that the memory is given back.
func TestBodyMemory(t *testing.T) {
	const max = 64 << 10
	s, ts := start(t, Config{MaxBody: max, BodyMemory: max, QueueWait: 50 * time.Millisecond})
	addr := ts.Listener.Addr().String()

	c := rawRequest(t, addr, "POST", "/v1/check", 1<<30, "")
	code, body, _ := readAnswer(t, c)
	wantError(t, "Content-Length over MaxBody, no body sent", code, body, 413, "too_large")

	body1 := docJSON("slow", "", strings.Repeat("word ", (max-100)/5))
	slow := rawRequest(t, addr, "POST", "/v1/check", len(body1), body1[:100])
	deadline := time.Now().Add(5 * time.Second)
	for s.bodies.take(context.Background(), max/2, 0) { // until the slow body holds it
		s.bodies.give(max / 2)
		if time.Now().After(deadline) {
			t.Fatal("the slow upload took no body memory")
		}
		time.Sleep(time.Millisecond)
	}
	small := docJSON("small", "", article)
	code, body, h := call(t, ts, "POST", "/v1/check", "", small)
	wantError(t, "a body while the memory is held", code, body, 429, "overloaded")
	if h.Get("Retry-After") == "" {
		t.Error("429 without Retry-After")
	}
	resp, err := ts.Client().Post(ts.URL+"/v1/check", "application/json", io.MultiReader(strings.NewReader(small)))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	wantError(t, "a chunked body while the memory is held", resp.StatusCode, b, 429, "overloaded")

	io.WriteString(slow, body1[100:])
	if code, body, _ := readAnswer(t, slow); code != 200 {
		t.Fatalf("the slow upload: %d %s", code, body)
	}
	if code, body, _ := call(t, ts, "POST", "/v1/check", "", small); code != 200 {
		t.Errorf("once the slow upload is answered: %d %s", code, body)
	}
	if !s.bodies.take(context.Background(), max, 0) {
		t.Error("the body memory was not all given back")
	}
}

// TestGunzipBodyMemory checks that gunzipped bytes are taken from the body memory.
func TestGunzipBodyMemory(t *testing.T) {
	z := gzipBytes(bytes.Repeat([]byte("a"), 1<<20))
	g := &bodyGrant{budget: newByteBudget(256 << 10), ctx: context.Background(), wait: time.Millisecond}
	if _, err := gunzip(z, 4<<20, g); !errors.Is(err, errBodyMemory) {
		t.Errorf("gunzip of 1 MiB with 256 KiB of body memory: %v, want %v", err, errBodyMemory)
	}
	g.release()
	g = &bodyGrant{budget: newByteBudget(2 << 20), ctx: context.Background(), wait: time.Millisecond}
	if b, err := gunzip(z, 4<<20, g); err != nil || len(b) != 1<<20 || g.held < 1<<20 || g.held > 1<<20+budgetChunk {
		t.Errorf("gunzip of 1 MiB with 2 MiB: %d bytes, %v, holding %d", len(b), err, g.held)
	}
}

// serveOn runs a ready server with cfg on a loopback listener and returns its address.
func serveOn(t *testing.T, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.SetDetector(newDetector(t))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return s, ln.Addr().String()
}

// get sends a GET on a new connection and returns the status and body.
func get(t *testing.T, addr, path string) (int, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
	code, b, _ := readAnswer(t, c)
	// The server closes the connection after its answer, and stops counting it before
	// the close reaches the client: once the end is read, the connection no longer
	// takes a slot. A connection the client closed first would be counted until the
	// server next read it, and the tests that fill MaxConns and the reserve would count
	// one connection too many.
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.Copy(io.Discard, c); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("GET %s: the server did not close the connection after its answer", path)
	}
	return code, b
}

// TestMaxConns fills MaxConns with idle connections: the reserve still answers the
// health checks (and refuses other requests), and past the reserve a connection is
// answered 503 and closed; once the idle ones are dropped after ReadHeaderTimeout,
// clients are served again.
func TestMaxConns(t *testing.T) {
	const max = 8
	const headerTimeout = 10 * time.Second
	_, addr := serveOn(t, Config{MaxConns: max, ReadHeaderTimeout: headerTimeout})
	// Both checks hold only while the idle connections keep their slots, for
	// ReadHeaderTimeout after they are accepted; on a starved machine that can pass
	// before the reserve is checked, and the whole attempt is made again.
	var idle []net.Conn
	for attempt := 1; ; attempt++ {
		var since time.Time
		idle, since = fillMaxConns(t, addr, max, headerTimeout)
		// The probes fillMaxConns sent must be seen closed first, or the reserve's
		// connections would be counted against them and refused.
		waitOpen(t, addr, max)
		if fillReserve(t, addr, since.Add(headerTimeout)) {
			break
		}
		for _, c := range idle {
			c.Close()
		}
		if attempt == 3 {
			t.Fatalf("3 attempts to fill MaxConns and the reserve within %v: the machine is too slow for this test", headerTimeout)
		}
		waitOpen(t, addr, 0)
	}
	for _, c := range idle {
		defer c.Close()
	}
	// Idle connections in the reserve are dropped within reserveLife, and the reserve
	// serves the probes again well before ReadHeaderTimeout frees the others.
	waitOpen(t, addr, max)
	if code, body := get(t, addr, "/healthz"); code != 200 {
		t.Errorf("GET /healthz once the idle reserve connections are dropped: %d %s", code, body)
	}

	// The idle connections are dropped after ReadHeaderTimeout.
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, _ := get(t, addr, "/v1/stats")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle connections still hold the server: /v1/stats %d", code)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(time.Second))
		if _, err := c.Read(make([]byte, 1)); err != io.EOF {
			t.Errorf("an idle connection is still open: %v", err)
			break
		}
	}
}

// fillMaxConns opens max idle connections to the server at addr and checks that the
// probes are still served, on the reserve, and that the API is not; it returns the idle
// connections and when they were opened.
func fillMaxConns(t *testing.T, addr string, max int, headerTimeout time.Duration) ([]net.Conn, time.Time) {
	t.Helper()
	// The idle connections hold their slots for ReadHeaderTimeout after they are
	// accepted, so the checks below prove something only when they end within it of the
	// dials; on a starved machine an attempt can take longer, and is made again.
	var idle []net.Conn
	for attempt := 1; ; attempt++ {
		start := time.Now()
		idle = idle[:0]
		for range max {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			idle = append(idle, c)
		}
		time.Sleep(100 * time.Millisecond) // let the server accept them
		var failed []string
		for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
			if code, body := get(t, addr, path); code != 200 {
				failed = append(failed, fmt.Sprintf("GET %s with %d idle connections: %d %.100s", path, max, code, body))
			}
		}
		code, body := get(t, addr, "/v1/stats")
		if time.Since(start) < headerTimeout {
			for _, f := range failed {
				t.Error(f)
			}
			wantError(t, "GET /v1/stats on a reserve connection", code, body, 503, "too_many_connections")
			return idle, start
		}
		for _, c := range idle {
			c.Close()
		}
		if attempt == 5 {
			t.Fatalf("5 attempts to fill MaxConns and check the reserve each took over %v: the machine is too slow for this test", headerTimeout)
		}
		waitOpen(t, addr, 0)
	}
}

// waitOpen waits until the server at addr counts want connections open besides the one
// that asks, and fails the test if it does not within 15 s: a client's close reaches the
// server's count only when the server next reads the connection.
func waitOpen(t *testing.T, addr string, want int) {
	t.Helper()
	line := fmt.Sprintf("\nneardup_http_open_connections %d\n", want+1)
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := get(t, addr, "/metrics")
		if code == 200 && bytes.Contains(body, []byte(line)) {
			return
		}
		if time.Now().After(deadline) {
			i := bytes.Index(body, []byte("\nneardup_http_open_connections "))
			t.Fatalf("the server does not come to %d open connections: /metrics %d %.60s", want, code, body[max(i, 0):])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// fillReserve opens connReserve more idle connections to the server at addr, whose
// MaxConns idle connections are open until idleUntil, and checks that a request past
// them is refused. It reports false, having checked nothing, when idleUntil passed
// before the answer came.
func fillReserve(t *testing.T, addr string, idleUntil time.Time) bool {
	t.Helper()
	// A reserve connection is dropped reserveLife after it is accepted, so the answer
	// past the reserve proves something only when it comes within reserveLife of the
	// dials; on a starved machine an attempt can take longer, and is made again.
	for attempt := 1; ; attempt++ {
		start := time.Now()
		var reserve []net.Conn
		for range connReserve {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			reserve = append(reserve, c)
		}
		time.Sleep(100 * time.Millisecond)
		code, body := get(t, addr, "/healthz")
		if time.Now().After(idleUntil) {
			for _, c := range reserve {
				c.Close()
			}
			return false
		}
		if time.Since(start) < reserveLife {
			wantError(t, "past the reserve", code, body, 503, "too_many_connections")
			for _, c := range reserve {
				t.Cleanup(func() { c.Close() }) // left idle: the server must drop them itself
			}
			return true
		}
		for _, c := range reserve {
			c.Close()
		}
		if attempt == 5 {
			t.Fatalf("5 attempts to fill the reserve each took over %v: the machine is too slow for this test", reserveLife)
		}
		waitOpen(t, addr, 0)
	}
}

// TestSlowloris sends a request's headers a byte every 50 ms: the connection is closed
// once ReadHeaderTimeout has passed, however long the client would go on.
func TestSlowloris(t *testing.T) {
	_, addr := serveOn(t, Config{ReadHeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	head := "GET /healthz HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Slow: y\r\n", 1000)
	for i := 0; i < len(head); i++ {
		if _, err := c.Write([]byte{head[i]}); err != nil {
			return // closed by the server
		}
		time.Sleep(50 * time.Millisecond)
		if time.Since(start) > 10*time.Second {
			t.Fatal("the server still reads a header sent for 10 s")
		}
	}
	t.Fatal("the whole slow header was read")
}

// TestEarly413 sends a body announced and sent over MaxBody at once, through Serve's
// connection limiter: the client reads the 413, not a reset.
func TestEarly413(t *testing.T) {
	_, addr := serveOn(t, Config{MaxBody: 64 << 10})
	c := rawRequest(t, addr, "POST", "/v1/documents", 4<<20, "")
	go c.Write(bytes.Repeat([]byte("x"), 4<<20)) // fails once the server closes
	code, body, _ := readAnswer(t, c)
	wantError(t, "a 4 MiB body over a 64 KiB MaxBody", code, body, 413, "too_large")
}
