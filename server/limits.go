package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// errBodyMemory answers a request whose body does not fit in the body memory the other
// requests' bodies leave within QueueWait.
var errBodyMemory = errorf(http.StatusTooManyRequests, "overloaded", "the server holds as many request bodies as its --body-memory allows; retry after the Retry-After seconds")

// byteBudget is a count of bytes that requests take before they hold them (a body being
// read, gunzipped, decoded and worked on) and give back when done, so that the bodies
// held at once stay within it. It is safe for concurrent use; a taker is not served in
// order of arrival, so a large body may wait longer than small ones.
type byteBudget struct {
	mu    sync.Mutex
	free  int64
	freed chan struct{} // closed and replaced whenever bytes are given back
}

func newByteBudget(n int64) *byteBudget {
	return &byteBudget{free: n, freed: make(chan struct{})}
}

// take takes n bytes, waiting at most wait (or until ctx ends) for them to be free; it
// reports whether it took them.
func (b *byteBudget) take(ctx context.Context, n int64, wait time.Duration) bool {
	var timer <-chan time.Time
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		freed := b.freed
		b.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-freed:
		case <-timer:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// give gives back n bytes taken.
func (b *byteBudget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
}

// bodyGrant is the body memory one request holds; it is used by the request's goroutine
// only, and given back when the request ends.
type bodyGrant struct {
	budget *byteBudget
	ctx    context.Context
	wait   time.Duration
	held   int64
}

// take takes n more bytes for the request, or returns errBodyMemory.
func (g *bodyGrant) take(n int64) error {
	if !g.budget.take(g.ctx, n, g.wait) {
		return errBodyMemory
	}
	g.held += n
	return nil
}

// release gives back all the request held; a nil grant holds nothing.
func (g *bodyGrant) release() {
	if g == nil {
		return
	}
	g.budget.give(g.held)
	g.held = 0
}

// budgetChunk is the most body memory a read of unknown length takes at a time.
const budgetChunk = 64 << 10

// budgetReader reads r, taking body memory from g for every byte before it is read: for
// a body of unknown length (chunked) and for a gunzipped body, whose size shows only as
// they are read. With a nil grant it reads r as it is.
type budgetReader struct {
	r io.Reader
	g *bodyGrant
}

func (b budgetReader) Read(p []byte) (int, error) {
	if b.g == nil {
		return b.r.Read(p)
	}
	want := min(len(p), budgetChunk)
	if err := b.g.take(int64(want)); err != nil {
		return 0, err
	}
	n, err := b.r.Read(p[:want])
	b.g.held -= int64(want - n)
	b.g.budget.give(int64(want - n))
	return n, err
}

// budgetBody is a request body under a grant: its bytes were taken at once when its
// length was announced, or are taken as they are read.
type budgetBody struct {
	io.ReadCloser
	g     *bodyGrant
	known bool // the announced length is taken
}

func (b *budgetBody) Read(p []byte) (int, error) {
	if b.known {
		return b.ReadCloser.Read(p)
	}
	return budgetReader{b.ReadCloser, b.g}.Read(p)
}

// grantBody puts r's body under a new grant of body memory: it takes the announced
// length at once (waiting up to QueueWait), so the body can be read into one slice of
// that size. A body announced over MaxBody is 413 too_large without a byte read. A
// request without a body gets a nil grant. The caller releases the grant when the
// request ends.
func (s *Server) grantBody(r *http.Request) (*bodyGrant, error) {
	if r.ContentLength > s.cfg.MaxBody {
		return nil, errorf(http.StatusRequestEntityTooLarge, "too_large", "the body is %d bytes, over %d (the server's --max-body); send less", r.ContentLength, s.cfg.MaxBody)
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	g := &bodyGrant{budget: s.bodies, ctx: r.Context(), wait: s.cfg.QueueWait}
	known := r.ContentLength >= 0
	if known {
		if err := g.take(r.ContentLength); err != nil {
			s.met.rejected.Inc()
			return nil, err
		}
	}
	r.Body = &budgetBody{ReadCloser: r.Body, g: g, known: known}
	return g, nil
}

// grantOf returns the grant r's body is read under, or nil.
func grantOf(r *http.Request) *bodyGrant {
	if b, ok := r.Body.(*budgetBody); ok {
		return b.g
	}
	return nil
}

// healthRoutes are the routes a connection in the reserve is served: the probes an
// orchestrator and a monitor must reach when clients hold every other connection.
var healthRoutes = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// connReserve is how many connections past MaxConns are accepted for healthRoutes only.
const connReserve = 16

// reserveLife bounds how long a connection in the reserve is read from: a probe asks
// and is answered within it, while an idle client that took a reserve slot gives it
// back as soon, rather than after ReadHeaderTimeout.
const reserveLife = time.Second

// errConnReserve answers a request other than a health check on a reserve connection.
var errConnReserve = errorf(http.StatusServiceUnavailable, "too_many_connections", "the server holds as many connections as its --max-conns allows; retry after the Retry-After seconds, or reuse a connection")

// connLimiter counts a listener's open connections: up to max serve every route, the
// next connReserve serve healthRoutes only, and those past that are answered 503 at
// once and closed, so that the process keeps file descriptors for its store and its
// probes however many clients connect.
type connLimiter struct {
	net.Listener
	max  int64
	open atomic.Int64
	met  *metrics
}

// Accept returns the next connection that fits, answering and closing those that do not.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		n := l.open.Add(1)
		if n <= l.max+connReserve {
			l.met.openConns.Inc()
		}
		if n <= l.max {
			return &limitedConn{Conn: c, l: l}, nil
		}
		if n <= l.max+connReserve {
			until := time.Now().Add(reserveLife)
			c.SetReadDeadline(until)
			return &limitedConn{Conn: c, l: l, reserve: true, until: until}, nil
		}
		l.open.Add(-1)
		l.met.refusedConns.Inc()
		refuseConn(c)
	}
}

// refusedResponse is what a connection past the reserve is told before it is closed.
var refusedResponse = func() []byte {
	body := `{"error":{"code":"too_many_connections","message":"the server holds as many connections as its --max-conns allows; retry after the Retry-After seconds"}}` + "\n"
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
}()

// refuseConn answers c 503 and closes it, without waiting for a slow reader: the answer
// fits in a socket's send buffer.
func refuseConn(c net.Conn) {
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.Write(refusedResponse)
	c.Close()
}

// limitedConn is a connection counted by its connLimiter until it is closed.
type limitedConn struct {
	net.Conn
	l       *connLimiter
	reserve bool      // past max: health checks only
	until   time.Time // a reserve connection's last read deadline
	closed  atomic.Bool
}

// CloseWrite half-closes the connection when it can, as net/http does before closing
// one whose request body it has not read (an early 413 or 429), so that the client
// reads the answer rather than a reset; the wrapper would hide it otherwise.
func (c *limitedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// SetReadDeadline keeps a reserve connection's deadlines within its life.
func (c *limitedConn) SetReadDeadline(t time.Time) error {
	if c.reserve && (t.IsZero() || t.After(c.until)) {
		t = c.until
	}
	return c.Conn.SetReadDeadline(t)
}

// SetDeadline keeps a reserve connection's read deadlines within its life.
func (c *limitedConn) SetDeadline(t time.Time) error {
	if err := c.Conn.SetDeadline(t); err != nil || !c.reserve {
		return err
	}
	return c.SetReadDeadline(t)
}

func (c *limitedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.open.Add(-1)
		c.l.met.openConns.Dec()
	}
	return c.Conn.Close()
}

// reserveKey is the context key of a connection in the reserve.
type reserveKey struct{}

// connContext marks the requests of a connection in the reserve (http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if lc, ok := c.(*limitedConn); ok && lc.reserve {
		return context.WithValue(ctx, reserveKey{}, true)
	}
	return ctx
}

// inReserve reports whether r came on a connection in the reserve.
func inReserve(r *http.Request) bool {
	v, _ := r.Context().Value(reserveKey{}).(bool)
	return v
}
