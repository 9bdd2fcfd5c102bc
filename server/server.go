package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup"
)

// Defaults of Config.
const (
	DefaultMaxBody         = 32 << 20
	DefaultMaxBatch        = 1000
	DefaultTimeout         = 30 * time.Second
	DefaultQueueWait       = 100 * time.Millisecond
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultBodyMemory is Config.BodyMemory's default (or MaxBody, when that is more).
	DefaultBodyMemory = 256 << 20
	// DefaultMaxConns is Config.MaxConns's default; neardup serve derives its own from
	// the process's file descriptor limit.
	DefaultMaxConns          = 1024
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// Config configures a Server. The zero value is the documented default of every field:
// no tokens (open, so Serve accepts loopback listeners only), a 32 MiB body limit, 1000
// documents or queries a batch, 16×GOMAXPROCS requests at work, 30 s a request.
type Config struct {
	// Tokens are the bearer tokens accepted; none means no authentication, which Serve
	// allows on a loopback address only.
	Tokens []Token
	// MaxBody is the largest request body in bytes; 0 means DefaultMaxBody. A larger
	// body is answered 413 too_large.
	MaxBody int64
	// MaxBatch is the most documents, or queries, in one batch; 0 means
	// DefaultMaxBatch. More is answered 413 too_many_documents or too_many_queries.
	MaxBatch int
	// MaxInflight is the most requests at work on the detector at once; 0 means
	// 16×GOMAXPROCS, as an add spends most of its time waiting for the fsync it shares
	// with the others (with 4×GOMAXPROCS, adds were a quarter slower). A request that finds them all busy waits up to QueueWait for one,
	// then is answered 429 overloaded with a Retry-After header: there is no unbounded
	// queue.
	MaxInflight int
	// QueueWait is how long a request waits for a free slot; 0 means DefaultQueueWait.
	QueueWait time.Duration
	// Timeout bounds the work of one request; past it the answer is 503 timeout (the
	// work itself finishes in the background, holding its slot). 0 means
	// DefaultTimeout. It also sets the http.Server's read and write timeouts in Serve.
	Timeout time.Duration
	// Logger receives startup, shutdown and error logs at info and above, and one line
	// per request at debug; nil discards them.
	Logger *slog.Logger
	// BodyMemory bounds the request bodies held at once, in bytes: a body takes its
	// announced length before it is read (or, sent chunked or gzipped, its bytes as they
	// are read) and holds it until its request is answered. A request that finds too
	// little free waits up to QueueWait, then is answered 429 overloaded with a
	// Retry-After header. 0 means DefaultBodyMemory; less than MaxBody means MaxBody.
	// Decoding and working on a body takes about as much again, on top.
	BodyMemory int64
	// MaxConns is the most connections served at once; 0 means DefaultMaxConns. Up to 16
	// more are accepted for /healthz, /readyz and /metrics only (other requests on them
	// are answered 503 too_many_connections); past those a connection is answered 503
	// and closed at once. Serve applies it; ServeHTTP alone does not.
	MaxConns int
	// ReadHeaderTimeout bounds the wait for a request's headers, from the connection's
	// first byte or its previous answer, so that a client that sends slowly or not at
	// all is dropped; 0 means DefaultReadHeaderTimeout. IdleTimeout closes a kept-alive
	// connection that sends nothing more; 0 means DefaultIdleTimeout.
	ReadHeaderTimeout, IdleTimeout time.Duration
	// StorePath and StoreKind ("memory", "pebble") describe where the index lives, for
	// /v1/stats.
	StorePath, StoreKind string
	// Health, when set, says why the store cannot take writes (nil when it can): while it
	// returns an error, /readyz answers 503 with the error as the reason (status
	// "no_space" for one wrapping store.ErrNoSpace, "store_failed" otherwise), and reads
	// go on. It is called on every /readyz and must be cheap.
	Health func() error
	// Backup, when set, writes a consistent copy of the store to a directory that does
	// not exist yet, on the server's machine, for POST /v1/admin/backup (write scope);
	// without it that endpoint answers 501.
	Backup func(dir string) error
}

func (c Config) withDefaults() Config {
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = DefaultMaxBatch
	}
	if c.MaxInflight <= 0 {
		c.MaxInflight = 16 * runtime.GOMAXPROCS(0)
	}
	if c.QueueWait <= 0 {
		c.QueueWait = DefaultQueueWait
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.BodyMemory <= 0 {
		c.BodyMemory = DefaultBodyMemory
	}
	c.BodyMemory = max(c.BodyMemory, c.MaxBody)
	if c.MaxConns <= 0 {
		c.MaxConns = DefaultMaxConns
	}
	if c.ReadHeaderTimeout <= 0 {
		c.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Server is the HTTP API of the dedup service over one *neardup.Detector. It serves
// from the moment it is made: /healthz answers at once, and /readyz and the /v1
// endpoints answer 503 until SetDetector gives it the detector, so that a process can
// listen while it loads its index. It is safe for concurrent use; it keeps no
// package-level state, so several may run in one process.
type Server struct {
	cfg     Config
	tokens  *tokenSet
	det     atomic.Pointer[neardup.Detector]
	stop    atomic.Bool
	mux     *http.ServeMux
	routes  []route
	sem     chan struct{}
	bodies  *byteBudget
	jobs    chan job       // to a worker waiting for work (see worker)
	work    sync.WaitGroup // requests' work, which may outlive a timed-out request
	met     *metrics
	started time.Time
	counts  [int(neardup.Changed) + 1]atomic.Int64 // verdicts since start, by kind
	screen  atomic.Pointer[screenBody]             // the last pre-screen answered

	mu sync.Mutex
	hs *http.Server

	// beforeWork, when set by a test, runs at the start of every request's work.
	beforeWork func()
}

// route is one registered endpoint.
type route struct {
	pattern string
	scope   Scope
}

// New returns a Server with the configuration, not yet listening (see Serve) and not
// yet ready (see SetDetector). It fails only for a token with an empty value.
func New(cfg Config) (*Server, error) {
	for i, t := range cfg.Tokens {
		if t.Value == "" || (t.Scope != ScopeRead && t.Scope != ScopeWrite) {
			return nil, fmt.Errorf("%w: token %d: needs a value and scope read or write", ErrTokens, i+1)
		}
	}
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:     cfg,
		tokens:  newTokenSet(cfg.Tokens),
		mux:     http.NewServeMux(),
		sem:     make(chan struct{}, cfg.MaxInflight),
		bodies:  newByteBudget(cfg.BodyMemory),
		jobs:    make(chan job),
		started: time.Now(),
	}
	s.met = newMetrics(func() float64 {
		if d := s.det.Load(); d != nil {
			return float64(d.Len())
		}
		return 0
	})
	s.handle("GET /healthz", ScopeNone, s.healthz)
	s.handle("GET /readyz", ScopeNone, s.readyz)
	s.handle("GET /metrics", ScopeNone, func(w http.ResponseWriter, r *http.Request) error {
		s.met.handler.ServeHTTP(w, r)
		return nil
	})
	s.handle("GET /openapi.json", ScopeNone, s.openapi)
	s.handle("GET /{$}", ScopeRead, s.page)
	s.handle("POST /{$}", ScopeRead, s.page)
	s.handle("POST /v1/documents", ScopeWrite, s.postDocument)
	s.handle("POST /v1/check", ScopeRead, s.check)
	// ServeMux takes "documents:batch" and "query:batch" as one literal segment each:
	// the colon is no syntax to it (TestRoutes checks that they route here, and
	// /v1/documents and /v1/fingerprints/query not).
	s.handle("POST /v1/documents:batch", ScopeWrite, s.batch)
	s.handle("GET /v1/documents/{id}", ScopeRead, s.getDocument)
	s.handle("DELETE /v1/documents/{id}", ScopeWrite, s.deleteDocument)
	s.handle("POST /v1/fingerprints/query", ScopeRead, s.query)
	s.handle("POST /v1/fingerprints/query:batch", ScopeRead, s.queryBatch)
	s.handle("POST /v1/compare", ScopeRead, s.compare)
	s.handle("GET /v1/stats", ScopeRead, s.stats)
	s.handle("GET /v1/prescreen", ScopeRead, s.prescreen)
	s.handle("POST /v1/admin/backup", ScopeWrite, s.backup)
	return s, nil
}

// handlerFunc is an endpoint: it writes its answer, or returns the error to answer with.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle registers h at the pattern behind the scope check.
func (s *Server) handle(pattern string, scope Scope, h handlerFunc) {
	s.routes = append(s.routes, route{pattern, scope})
	health := healthRoutes[pattern]
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if inReserve(r) {
			w.Header().Set("Connection", "close") // give the reserve back
			if !health {
				s.writeError(w, r, errConnReserve)
				return
			}
		}
		err := s.authorize(w, r, scope)
		if err == nil {
			var g *bodyGrant
			if g, err = s.grantBody(r); err == nil {
				err = h(w, r)
				g.release()
			}
		}
		if err != nil {
			s.writeError(w, r, err)
		}
	})
}

// authorize checks the request's token against the route's scope.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request, need Scope) error {
	if need == ScopeNone || s.tokens.empty() {
		return nil
	}
	tok, ok := presented(r)
	if !ok {
		return errorf(http.StatusUnauthorized, "unauthorized", "no token: send \"Authorization: Bearer TOKEN\"")
	}
	have := s.tokens.scope(tok)
	switch {
	case have == ScopeNone:
		return errorf(http.StatusUnauthorized, "unauthorized", "unknown token")
	case have < need:
		return errorf(http.StatusForbidden, "forbidden", "this token has the %v scope; %s %s needs %v", have, r.Method, r.URL.Path, need)
	}
	return nil
}

// SetDetector makes the server ready, answering with d. It may be called again to
// swap detectors; the caller keeps d and closes what it needs after Shutdown.
func (s *Server) SetDetector(d *neardup.Detector) {
	s.det.Store(d)
	s.cfg.Logger.Info("ready", "documents", d.Len())
}

// detector returns the detector, or 503 not_ready before SetDetector and once Shutdown
// has begun.
func (s *Server) detector() (*neardup.Detector, error) {
	d := s.det.Load()
	switch {
	case s.stop.Load():
		return nil, errorf(http.StatusServiceUnavailable, "not_ready", "the server is stopping; retry on another instance or after its restart")
	case d == nil:
		return nil, errorf(http.StatusServiceUnavailable, "not_ready", "the index is loading; retry when /readyz answers 200")
	}
	return d, nil
}

// ServeHTTP routes the request, answering 404 and 405 with JSON errors, and records its
// metrics and log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	s.met.inFlight.Inc()
	defer s.met.inFlight.Dec()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	_, pattern := s.mux.Handler(r)
	route := pattern
	switch {
	case pattern != "":
		s.mux.ServeHTTP(rec, r)
	default:
		route = "unmatched"
		if allow := s.allowed(r); allow != "" {
			rec.Header().Set("Allow", allow)
			s.writeError(rec, r, errorf(http.StatusMethodNotAllowed, "method_not_allowed", "%s %s: use %s", r.Method, r.URL.Path, allow))
		} else if r.URL.Path != "" && r.URL.Path[0] == '/' && cleanPath(r.URL.Path) {
			s.writeError(rec, r, errorf(http.StatusNotFound, "not_found", "no endpoint %s; see /openapi.json", r.URL.Path))
		} else {
			s.mux.ServeHTTP(&jsonNotFound{ResponseWriter: rec, s: s, r: r}, r) // the mux's redirect to the clean path
		}
	}
	code := strconv.Itoa(rec.status)
	d := time.Since(start)
	s.met.requests.WithLabelValues(route, code).Inc()
	s.met.latency.WithLabelValues(route).Observe(d.Seconds())
	s.cfg.Logger.Debug("request", "method", r.Method, "path", r.URL.Path, "route", route,
		"status", rec.status, "bytes", rec.bytes, "duration", d, "remote", r.RemoteAddr)
}

// cleanPath reports whether the mux would serve p as it is, without a redirect.
func cleanPath(p string) bool {
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '/' && (p[i+1] == '/' || p[i+1] == '.') {
			return false
		}
	}
	return true
}

// allowed returns the methods that have a route at the request's path, "" when none has.
func (s *Server) allowed(r *http.Request) string {
	var allow string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		r2 := r.Clone(r.Context())
		r2.Method = m
		if _, p := s.mux.Handler(r2); p != "" {
			if allow != "" {
				allow += ", "
			}
			allow += m
		}
	}
	return allow
}

// errOverloaded and errTimeout are the answers of do when it cannot do the work.
var (
	errOverloaded = errorf(http.StatusTooManyRequests, "overloaded", "every worker is busy; retry after the Retry-After seconds")
	errTimeout    = errorf(http.StatusServiceUnavailable, "timeout", "the request ran past the server's --timeout; send less at a time")
)

// do runs work in a slot of the in-flight semaphore, on a worker goroutine so that the
// request is answered when its deadline passes even though the detector does not take a
// context; the work then finishes in the background and keeps its slot until it has.
// It waits at most QueueWait for a slot, then answers 429.
func (s *Server) do(ctx context.Context, work func(ctx context.Context) error) error {
	select {
	case s.sem <- struct{}{}:
	default:
		t := time.NewTimer(s.cfg.QueueWait)
		defer t.Stop()
		select {
		case s.sem <- struct{}{}:
		case <-t.C:
			s.met.rejected.Inc()
			return errOverloaded
		case <-ctx.Done():
			return errTimeout
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel() // here, not in the worker: its end must not look like a timeout
	done := make(chan error, 1)
	s.work.Add(1)
	j := job{ctx, work, done}
	select {
	case s.jobs <- j: // a worker was waiting for work
	default:
		go s.worker(j)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		select {
		case err := <-done: // finished just in time
			return err
		default:
			return errTimeout
		}
	}
}

// job is a request's work, handed to a worker.
type job struct {
	ctx  context.Context
	work func(ctx context.Context) error
	done chan<- error
}

// workerIdle is how long a worker waits for more work before it ends.
const workerIdle = 10 * time.Second

// worker runs j and then, while more comes within workerIdle, other requests' work. A
// goroutine that lives on keeps the stack the detector's reads grew: a new goroutine for
// each request grew its stack anew through pebble's deep calls, a cost that showed in
// profiles under raw queries. There are never more workers at work than in-flight slots.
func (s *Server) worker(j job) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		s.run(j)
		idle.Reset(workerIdle)
		select {
		case j = <-s.jobs:
		case <-idle.C:
			return
		}
	}
}

// run does j's work, answers its outcome and frees its in-flight slot. A panic in the
// work answers 500 and leaves the worker running.
func (s *Server) run(j job) {
	defer s.work.Done()
	defer func() { <-s.sem }()
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Logger.Error("panic at work", "panic", p)
			j.done <- errorf(http.StatusInternalServerError, "internal", "the server failed; this is a bug, please report it")
		}
	}()
	if s.beforeWork != nil {
		s.beforeWork()
	}
	j.done <- j.work(j.ctx)
}

// Serve answers requests on ln until Shutdown, with the http.Server timeouts set from
// the Config (headers within ReadHeaderTimeout, the body within Timeout, the answer
// within Timeout plus 5 s, idle connections closed after IdleTimeout) and at most
// MaxConns connections (and the health checks' reserve). With no tokens configured it
// refuses a listener that is not on a loopback address, returning an error wrapping
// ErrNoTokens, and logs a warning that the service is open to local users. It returns
// nil after Shutdown; it is to be called once.
func (s *Server) Serve(ln net.Listener) error {
	if s.tokens.empty() {
		if !loopback(ln.Addr()) {
			return fmt.Errorf("%w: %v is reachable from other machines: give tokens (--tokens FILE or NEARDUP_TOKENS=\"write:TOKEN\") or listen on 127.0.0.1", ErrNoTokens, ln.Addr())
		}
		s.cfg.Logger.Warn("no tokens configured: the service is open to every user of this machine", "addr", ln.Addr().String())
	}
	ln = &connLimiter{Listener: ln, max: int64(s.cfg.MaxConns), met: s.met}
	hs := &http.Server{
		Handler:           s,
		ConnContext:       connContext,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		ReadTimeout:       s.cfg.Timeout,
		WriteTimeout:      s.cfg.Timeout + 5*time.Second,
		IdleTimeout:       s.cfg.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.cfg.Logger.Handler(), slog.LevelWarn),
	}
	s.mu.Lock()
	if s.stop.Load() {
		s.mu.Unlock()
		ln.Close() // else the kernel keeps accepting connections that nobody answers
		return nil
	}
	s.hs = hs
	s.mu.Unlock()
	s.cfg.Logger.Info("listening", "addr", ln.Addr().String())
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Loopback reports whether addr is a loopback TCP address or a Unix socket: one only
// this machine can reach, where Serve serves without tokens.
func Loopback(addr net.Addr) bool { return loopback(addr) }

// loopback reports whether addr is a loopback TCP address or a Unix socket.
func loopback(addr net.Addr) bool {
	switch a := addr.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// Shutdown stops the server: /readyz answers 503 stopping and the /v1 endpoints 503
// not_ready at once, the listener closes, requests in flight finish, and then so does
// the work of requests that timed out. It returns when all of that is done or ctx ends
// (then with ctx's error); after it returns nil, nothing uses the detector any more and
// its store may be closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stop.Store(true)
	hs := s.hs
	s.mu.Unlock()
	s.cfg.Logger.Info("stopping")
	var err error
	if hs != nil {
		err = hs.Shutdown(ctx)
	}
	done := make(chan struct{})
	go func() { s.work.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		if err == nil {
			err = ctx.Err()
		}
	}
	return err
}
