package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// conn is one client's keep-alive connection to a plain-HTTP service: a request is
// written with one system call (its head and the prepared body together) and its
// response read by http.ReadResponse on the calling goroutine. net/http's client hands
// every request to a connection's writer and reader goroutines and back, which took
// more CPU a request than the handler of a small document; a generator that shares the
// service's cores measures itself with it. An https service is sent through the
// Target's http.Client instead. A conn is used by one goroutine at a time.
type conn struct {
	nc     net.Conn
	br     *bufio.Reader
	served int             // responses read on nc
	ctx    context.Context // the context whose end closes nc's deadline (watch)
	stop   func() bool     // stops that watch
	head   []byte          // the request head, rewritten for each request
}

// rawBase is where a conn sends the requests of a Target: the address to dial, the
// Host header and the path prefix; ok is false for a base URL that is not plain HTTP.
type rawBase struct {
	ok     bool
	dial   string
	host   string
	prefix string // the base URL's path, without a trailing slash
}

// parseRawBase returns the rawBase of the service at base.
func parseRawBase(base string) rawBase {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.RawQuery != "" {
		return rawBase{}
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return rawBase{ok: true, dial: net.JoinHostPort(u.Hostname(), port), host: u.Host, prefix: strings.TrimSuffix(u.EscapedPath(), "/")}
}

// post sends body to path and reads the whole response into resp (so the connection is
// reused), as Target.post does, on c's connection, dialed when there is none. A request
// that fails on a connection that has served others is sent once more on a new one
// when nothing came back: the service may have closed the idle connection as the
// request went out, which net/http's client retries too.
func (c *conn) post(ctx context.Context, t *Target, path string, body []byte, resp *bytes.Buffer) (status int, err error) {
	if !t.raw.ok {
		return t.post(ctx, path, body, resp)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for try := 0; ; try++ {
		reused := c.nc != nil && c.served > 0
		status, answered, err := c.send(ctx, t, path, body, resp)
		if err == nil {
			return status, nil
		}
		c.close()
		if !reused || answered || try > 0 || ctx.Err() != nil || !retryable(err) {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			return 0, err
		}
	}
}

// send is one try of post; answered reports that part of a response was read.
func (c *conn) send(ctx context.Context, t *Target, path string, body []byte, resp *bytes.Buffer) (status int, answered bool, err error) {
	if c.nc == nil {
		if err := c.dial(ctx, t); err != nil {
			return 0, false, err
		}
	}
	if c.ctx != ctx {
		c.watch(ctx)
	}
	c.nc.SetDeadline(time.Now().Add(loadTimeout))
	if err := ctx.Err(); err != nil {
		return 0, false, err // ended before the deadline was set, which would undo watch's
	}
	c.head = append(c.head[:0], "POST "...)
	c.head = append(c.head, t.raw.prefix...)
	c.head = append(c.head, path...)
	c.head = append(c.head, " HTTP/1.1\r\nHost: "...)
	c.head = append(c.head, t.raw.host...)
	c.head = append(c.head, "\r\nContent-Type: application/json\r\nContent-Length: "...)
	c.head = strconv.AppendInt(c.head, int64(len(body)), 10)
	if t.token != "" {
		c.head = append(c.head, "\r\nAuthorization: Bearer "...)
		c.head = append(c.head, t.token...)
	}
	c.head = append(c.head, "\r\n\r\n"...)
	bufs := net.Buffers{c.head, body}
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return 0, false, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return 0, false, err // nothing came back (ReadResponse says io.ErrUnexpectedEOF then)
	}
	r, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return 0, true, err
	}
	resp.Reset()
	_, err = resp.ReadFrom(r.Body)
	r.Body.Close()
	if err != nil {
		return 0, true, err
	}
	c.served++
	if r.Close {
		c.close()
	}
	return r.StatusCode, true, nil
}

// dial opens c's connection.
func (c *conn) dial(ctx context.Context, t *Target) error {
	d := net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", t.raw.dial)
	if err != nil {
		return &url.Error{Op: "Post", URL: t.base, Err: err}
	}
	c.nc, c.served = nc, 0
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 64<<10)
	} else {
		c.br.Reset(nc)
	}
	c.watch(ctx)
	return nil
}

// watch makes the end of ctx interrupt what c's connection is doing.
func (c *conn) watch(ctx context.Context) {
	if c.stop != nil {
		c.stop()
	}
	nc := c.nc
	c.ctx = ctx
	c.stop = context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
}

// close closes c's connection, if any; the next post dials a new one.
func (c *conn) close() {
	if c.stop != nil {
		c.stop()
		c.stop, c.ctx = nil, nil
	}
	if c.nc != nil {
		c.nc.Close()
		c.nc = nil
	}
}

// retryable reports whether err is how a connection the service has closed fails.
func retryable(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
