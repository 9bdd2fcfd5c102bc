package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/pebblestore"
	"github.com/neardup/neardup/store/redisstore"
)

var serveCommand = &command{
	name:    "serve",
	summary: "run the dedup service: the HTTP API over a detector (see /openapi.json)",
	about: `Runs the neardup service: the HTTP API of package server over one detector, for crawlers
that ask, for every fetched page, whether it is new. It listens at once; /healthz answers
200 and /readyz 503 "loading" until the index is loaded, then 200. The endpoints are
listed at /openapi.json; the web page at / compares two documents and looks one up.

Authentication: bearer tokens with a read or write scope (write implies read), from
--tokens FILE (lines "read TOKEN" or "write TOKEN", # comments) and from the environment
variable NEARDUP_TOKENS ("write:tok1,read:tok2"); both are used when both are given.
Without tokens the service is open, and so it refuses to listen on anything but a
loopback address.

Every flag can also be set by the environment variable NEARDUP_ and its name in
capitals with - as _ (--max-body: NEARDUP_MAX_BODY; --tokens: NEARDUP_TOKENS_FILE, as
NEARDUP_TOKENS holds tokens themselves); a flag on the command line wins.

The service runs Go with twice as many Ps as CPUs (unless GOMAXPROCS is set): adds wait
on fsyncs, and spare Ps get the write-ahead log's writer scheduled sooner. Where the C
library is glibc, it caps malloc at 2 arenas (unless MALLOC_ARENA_MAX is set): the
store's block cache and memtables are C allocations, and glibc's default of eight arenas
a CPU keeps hundreds of megabytes of freed blocks.

The service keeps --min-free bytes free on the disk of --data: below it, adds get 507,
/readyz answers 503 "no_space" with the reason, and reads and deletes go on; adds are
taken again once space is freed. Never remove or edit a file in --data: the *.log
files hold acknowledged documents not yet in a table. "neardup backup" copies the
store while the service runs.

On SIGTERM or SIGINT the service stops: /readyz answers 503 "stopping", it stops
accepting connections, finishes the requests in flight within --shutdown-timeout, and
then closes the index.
`,
	new: func() runner { return &serveCmd{} },
}

// serveCmd is "neardup serve".
type serveCmd struct {
	fs              *flag.FlagSet
	data            string
	addr            string
	debugAddr       string
	tokensFile      string
	maxBody         byteSize
	maxBatch        int
	maxInflight     int
	maxConns        int
	bodyMemory      byteSize
	maxBytes        int
	cacheSize       byteSize
	minFree         byteSize
	memoryLimit     byteSize
	bandMemory      byteSize
	timeout         time.Duration
	shutdownTimeout time.Duration
	logFormat       string
	logLevel        string
	near            string
	distance        int
	threshold       float64
	maxAge          time.Duration
	keep            string
	noExtract       bool
	noVerify        bool
	refresh         time.Duration // --prescreen-refresh
	text            textFlags
	redis           redisFlags
}

// envName returns the environment variable of a flag.
func envName(flagName string) string {
	if flagName == "tokens" {
		return "NEARDUP_TOKENS_FILE"
	}
	return "NEARDUP_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

func (c *serveCmd) define(fs *flag.FlagSet) {
	c.fs = fs
	fs.StringVar(&c.data, "data", "neardup-data", "keep the index in `DIR`, created if missing (default neardup-data)")
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "listen at `HOST:PORT` (default 127.0.0.1:8080: this machine only)")
	fs.StringVar(&c.debugAddr, "debug-addr", "", "serve Go's pprof profiles at `HOST:PORT`, a listener of its own, on a loopback\naddress only: they have no authentication (default \"\": none)")
	fs.StringVar(&c.tokensFile, "tokens", "", "read bearer tokens from `FILE`: lines \"read TOKEN\" or \"write TOKEN\" (default \"\")")
	c.maxBody, c.memoryLimit, c.cacheSize, c.bandMemory = server.DefaultMaxBody, defaultMemoryLimit, defaultCacheSize, neardup.DefaultBandMemory
	fs.Var(&c.maxBody, "max-body", "refuse request bodies over `BYTES` with 413 (default 32MiB)")
	fs.Var(&c.bodyMemory, "body-memory", "hold at most `BYTES` of request bodies at once; a body that does not fit waits 100 ms,\nthen gets 429 (default 0: an eighth of --memory-limit, 256MiB without one, and at\nleast --max-body)")
	fs.IntVar(&c.maxConns, "max-conns", 0, "serve at most `N` connections at once, and 16 more for /healthz, /readyz and /metrics;\nmore are answered 503 and closed (default 0: from the open files limit, less what the\nstore needs, at most 10000)")
	fs.IntVar(&c.maxBytes, "max-bytes", extract.DefaultMaxBytes, fmt.Sprintf("refuse a page larger than `N` bytes with 400, after html_base64 decoding (default %d:\n%d MiB)", extract.DefaultMaxBytes, extract.DefaultMaxBytes>>20))
	fs.IntVar(&c.maxBatch, "max-batch", server.DefaultMaxBatch, fmt.Sprintf("refuse batches of more than `N` documents or queries with 413 (default %d)", server.DefaultMaxBatch))
	fs.Var(&c.memoryLimit, "memory-limit", "keep the Go heap under `BYTES` by collecting garbage sooner (debug.SetMemoryLimit; the\nGOMEMLIMIT environment variable wins; 0: no limit) (default 1216MiB); the block cache\nand memtables come on top")
	fs.Var(&c.cacheSize, "cache-size", "give the store a block cache of `BYTES` (default 256MiB)")
	c.minFree = pebblestore.DefaultMinFree
	fs.Var(&c.minFree, "min-free", "keep `BYTES` free on the disk of --data: below it, adds get 507 and /readyz 503\nno_space (reads go on) until space is freed, and serve refuses to start; 0: no\nwatermark (default 512MiB)")
	fs.Var(&c.bandMemory, "band-memory", "keep a copy of the LSH band postings in memory, up to `BYTES` (10-20 bytes a posting,\n26 postings a document at the defaults: 512MiB holds about two million documents), so\nthat checks and queries find their band candidates without the store; past it the store\nanswers them; 0: no copy (default 512MiB)")
	fs.IntVar(&c.maxInflight, "max-inflight", 0, "work on at most `N` requests at once; more wait 100 ms, then get 429\n(default 0: 16 x GOMAXPROCS)")
	fs.DurationVar(&c.timeout, "timeout", server.DefaultTimeout, "answer 503 timeout to a request whose work takes longer than `D` (default 30s)")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", server.DefaultShutdownTimeout, "on SIGTERM, wait at most `D` for requests in flight (default 30s)")
	fs.StringVar(&c.logFormat, "log-format", "text", "write logs to standard error as `FORMAT`: text or json (default text)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log at `LEVEL` and above: debug (one line per request), info, warn, error\n(default info)")
	fs.StringVar(&c.near, "near", "any", "near-duplicate `RULE`: any (SimHash distance or MinHash similarity), simhash,\nminhash, or both (default any)")
	fs.IntVar(&c.distance, "distance", neardup.DefaultDistance, fmt.Sprintf("largest SimHash distance of a near-duplicate, in `BITS`, 0 to 16 (default %d)", neardup.DefaultDistance))
	fs.Float64Var(&c.threshold, "threshold", neardup.DefaultThreshold, fmt.Sprintf("smallest MinHash similarity of a near-duplicate, `S` in (0, 1] (default %g)", neardup.DefaultThreshold))
	fs.DurationVar(&c.maxAge, "max-age", 0, "forget documents not seen for longer than `D` (default 0s: never)")
	fs.StringVar(&c.keep, "keep", neardup.DefaultKeepPolicy.String(), "keep `POLICY`: comma-separated rules among priority, first, last, longest,\nshortest, id, tried in order (default "+neardup.DefaultKeepPolicy.String()+")")
	fs.BoolVar(&c.noExtract, "no-extract", false, "use the whole page's visible text instead of its main content (default false)")
	fs.BoolVar(&c.noVerify, "no-verify", false, "decide MinHash near-duplicates by the signatures' estimate, without keeping each page's\nshingle sketch to verify them (about 4 bytes a distinct shingle, at most 4KiB a page)\n(default false: verify)")
	fs.DurationVar(&c.refresh, "prescreen-refresh", neardup.DefaultPrescreenRefresh, "with --redis: refill the pre-screen (GET /v1/prescreen) from the cluster, in the\nbackground, once it is older than `D`; another replica's add shows in it within D and a\nscan of the cluster's URL and main-text keys (default 1m0s)")
	c.text.define(fs)
	c.redis.define(fs)
	fs.VisitAll(func(f *flag.Flag) { f.Usage += "\n(env " + envName(f.Name) + ")" })
}

// applyEnv sets every flag not given on the command line from its environment variable.
func (c *serveCmd) applyEnv(getenv func(string) string) error {
	given := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	c.fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if given[f.Name] || v == "" || err != nil {
			return
		}
		if e := c.fs.Set(f.Name, v); e != nil {
			err = usagef("%s=%q: %v", envName(f.Name), v, e)
		}
	})
	return err
}

func (c *serveCmd) run(e *env, args []string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(serveProcs * runtime.GOMAXPROCS(0))
	}
	return c.serve(ctx, e, args, os.Getenv, nil)
}

// serveProcs is how many Go Ps the service runs with for each CPU Go would use (unless
// GOMAXPROCS is set): an add spends most of its time waiting on its fsync, and pebble's
// WAL writer then has to be scheduled on the busy cores before the waiters can be; with
// spare Ps the kernel schedules it sooner. With 2 a CPU, adds at a million documents
// went from 1,830-2,460 to 2,660-2,990/s (alternate runs of 25 s).
const serveProcs = 2

// serveArenas is how many arenas the C allocator may keep (unless MALLOC_ARENA_MAX is
// set), where it is glibc's. Pebble allocates its block cache and memtables with C malloc,
// and glibc's default, eight arenas a CPU, each freeing into its own, left hundreds of
// megabytes of freed cache blocks in the process: at ten million documents the service
// was 1.73 GiB once loaded and 2.03 GiB after 30 s of adds, where with 2 arenas it was
// 1.54 and 1.88 GiB. A million documents ran no slower.
const serveArenas = 2

// serveConfig is what serve resolved from the flags and the environment.
type serveConfig struct {
	data      string
	cacheSize int64
	minFree   int64 // pebblestore.Options.MinFree: -1 for none
	opt       neardup.Options
	redis     *redisstore.Options // nil: the pebble store in data
}

// serveStore is the store the service runs on, as serve uses it beyond the detector:
// closed at the end, asked for its health (the disk watermark, a failed log) and for a
// consistent copy (POST /v1/admin/backup).
type serveStore interface {
	io.Closer
	Health() error
	Checkpoint(dir string) error
}

// storeKind is what openDetector keeps the index in, for /v1/stats.
func (cfg serveConfig) storeKind() string {
	if cfg.redis != nil {
		return "redis"
	}
	return "pebble"
}

// storePath is where the index lives: the data directory, or the Redis nodes given
// (without credentials).
func (cfg serveConfig) storePath() string {
	if cfg.redis != nil {
		return strings.Join(cfg.redis.Addrs, ",")
	}
	return cfg.data
}

// defaultCacheSize is --cache-size's default: enough for the hot blocks of a few million
// documents' postings.
const defaultCacheSize = 256 << 20

// defaultMemoryLimit is --memory-limit's default. Without a limit the Go heap grows to
// twice its live size between collections: at ten million documents, 1.1 GB live (the
// SimHash index, the band filter) made a 3.1 GB process; with 1.25 GiB, 2.1 GB. The band
// filter's 2% rate took 60 MB off the live heap, and the limit as much.
const defaultMemoryLimit = 1216 << 20

// openDetector opens the pebble store at cfg.data (creating it when the directory is
// empty or absent), or the Redis Cluster store with --redis, and the detector over it,
// and returns the store, which the caller closes.
func openDetector(cfg serveConfig, log *slog.Logger) (*neardup.Detector, serveStore, error) {
	if cfg.redis != nil {
		return openRedisDetector(cfg, log)
	}
	s, err := pebblestore.Open(cfg.data, pebblestore.Options{CacheSize: cfg.cacheSize, MinFree: cfg.minFree, Logger: log})
	if err != nil {
		return nil, nil, err
	}
	d, err := neardup.OpenDetector(s, cfg.opt)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return d, s, nil
}

// serve runs the service until ctx ends. listening, when not nil, is told the address
// once the listener is open (for tests, which listen on port 0).
func (c *serveCmd) serve(ctx context.Context, e *env, args []string, getenv func(string) string, listening func(net.Addr)) error {
	if len(args) > 0 {
		return usagef("serve takes no arguments, not %q", args[0])
	}
	if err := c.applyEnv(getenv); err != nil {
		return err
	}
	log, err := c.logger(e.stderr)
	if err != nil {
		return err
	}
	cfg, err := c.config()
	if err != nil {
		return err
	}
	tokens, err := c.tokens(getenv)
	if err != nil {
		return err
	}
	var db atomic.Pointer[serveStore] // once open
	srv, err := server.New(server.Config{
		Tokens: tokens, MaxBody: int64(c.maxBody), MaxBatch: c.maxBatch, MaxInflight: c.maxInflight,
		BodyMemory: c.bodyMemoryOrDefault(), MaxConns: c.maxConnsOrDefault(openFilesLimit()),
		Timeout: c.timeout, Logger: log, StorePath: cfg.storePath(), StoreKind: cfg.storeKind(),
		Health: func() error {
			if s := db.Load(); s != nil {
				return (*s).Health()
			}
			return nil
		},
		Backup: func(dir string) error { return (*db.Load()).Checkpoint(dir) }, // the server asks once ready
	})
	if err != nil {
		return usagef("%v", err)
	}
	// Every check that can refuse to start comes before the store is opened and the
	// index loaded, which takes minutes at ten million documents.
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", c.addr, err)
	}
	if len(tokens) == 0 && !server.Loopback(ln.Addr()) {
		ln.Close()
		return usagef("--addr %s is reachable from other machines and no tokens are configured: give tokens (--tokens FILE or NEARDUP_TOKENS=\"write:TOKEN\") or listen on 127.0.0.1", c.addr)
	}
	if c.debugAddr != "" {
		stopDebug, err := serveDebug(c.debugAddr, log)
		if err != nil {
			ln.Close()
			return err
		}
		defer stopDebug()
	}
	if listening != nil {
		listening(ln.Addr())
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	c.setUp(log, cfg, getenv)
	start := time.Now()
	d, closer, err := openDetector(cfg, log)
	if err != nil {
		srv.Shutdown(context.Background())
		<-served
		return fmt.Errorf("opening the index at %s: %w", cfg.storePath(), err)
	}
	copyOn, copyBytes := d.BandCopy()
	log.Info("index loaded", "documents", d.Len(), "seconds", time.Since(start).Seconds(),
		"band_copy", copyOn, "band_copy_bytes", copyBytes, "band_postings", d.BandPostings())
	if !copyOn && c.bandMemory > 0 && cfg.redis == nil {
		log.Warn("the band postings do not fit --band-memory: checks and queries look their bands up in the store, which is slower", "band_memory", c.bandMemory.String())
	}
	db.Store(&closer)
	srv.SetDetector(d)
	go logBandMoves(ctx, log, d, 5*time.Second)
	go logHealth(ctx, log, closer, 5*time.Second)
	return c.wait(ctx, log, srv, served, closer)
}

// setUp limits the C library's malloc arenas and the Go heap as the flags and the
// environment say, and logs what holds.
func (c *serveCmd) setUp(log *slog.Logger, cfg serveConfig, getenv func(string) string) {
	arenas := "the C library's default"
	if v := getenv("MALLOC_ARENA_MAX"); v != "" {
		arenas = "MALLOC_ARENA_MAX=" + v
	} else if ok, _ := limitMallocArenas(serveArenas); ok {
		arenas = strconv.Itoa(serveArenas)
	}
	log.Info("loading the index", "data", cfg.storePath(), "store", cfg.storeKind(), "gomaxprocs", runtime.GOMAXPROCS(0), "malloc_arenas", arenas)
	// The defaults differ from dedup's (docs/cli.md says why), so the log says which hold.
	log.Info("duplicate rules", "near", c.near, "distance", c.distance, "threshold", c.threshold, "keep", c.keep,
		"shingles", c.text.describe(), "extract", !c.noExtract, "verify", !c.noVerify)
	if c.memoryLimit > 0 && getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(int64(c.memoryLimit))
	}
}

// wait serves until Serve fails or ctx is done, then stops the server within
// --shutdown-timeout and closes the index.
func (c *serveCmd) wait(ctx context.Context, log *slog.Logger, srv *server.Server, served <-chan error, closer serveStore) error {
	var err error
	select {
	case err = <-served:
		// Serve failed (ErrNoTokens, or the listener broke): nothing is in flight.
	case <-ctx.Done():
		log.Info("signal received; stopping", "shutdown_timeout", c.shutdownTimeout)
		sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
		err = srv.Shutdown(sctx)
		cancel()
		if serr := <-served; err == nil {
			err = serr
		}
		if err != nil {
			err = fmt.Errorf("stopping: %w (requests still in flight were cut off)", err)
		}
	}
	if cerr := closer.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("closing the index: %w", cerr)
	}
	if errors.Is(err, server.ErrNoTokens) {
		return usagef("%v", err)
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// logBandMoves logs, checking every interval until ctx ends, when the band postings
// start moving to the store (the copy outgrew --band-memory), when they are there, and
// when a move failed (it is retried).
func logBandMoves(ctx context.Context, log *slog.Logger, d *neardup.Detector, interval time.Duration) {
	last := d.BandPostings()
	t := time.NewTicker(interval)
	defer t.Stop()
	for last != "store" {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := d.BandPostings()
		switch {
		case now == last:
		case now == "moving":
			log.Warn("the band postings outgrew --band-memory: writing them to the store, which slows adds for a while (here about 1.5 minutes a million documents); the band copy answers meanwhile", "documents", d.Len())
		case now == "store":
			log.Info("the band postings are in the store; the band copy is dropped", "documents", d.Len())
		default:
			log.Error("writing the band postings to the store failed; it is retried in a minute", "documents", d.Len())
		}
		last = now
	}
}

// logHealth logs, checking every interval until ctx ends, when the store stops taking
// writes (its disk is below --min-free, or its log failed) and when it takes them again.
func logHealth(ctx context.Context, log *slog.Logger, db serveStore, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	// The state, not the message, which says how much is free and changes every time.
	state := func(err error) string {
		switch {
		case err == nil:
			return "ok"
		case errors.Is(err, store.ErrNoSpace):
			return "no_space"
		}
		return "failed"
	}
	last := "ok"
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		err := db.Health()
		switch now := state(err); {
		case now == last:
		case now == "ok":
			log.Info("the store takes writes again")
		case now == "no_space":
			log.Error("the disk is below --min-free: adds get 507 until space is freed; reads go on", "err", err)
		default:
			log.Error("the store's log failed: adds get 503 until serve is restarted; reads go on", "err", err)
		}
		last = state(err)
	}
}

// logger returns the slog logger of --log-format and --log-level, writing to w.
func (c *serveCmd) logger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, usagef("--log-level %q: use debug, info, warn or error", c.logLevel)
	}
	o := &slog.HandlerOptions{Level: level}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	}
	return nil, usagef("--log-format %q: use text or json", c.logFormat)
}

// config checks the flags and returns the detector's configuration.
func (c *serveCmd) config() (serveConfig, error) {
	var cfg serveConfig
	near, err := neardup.ParseNear(c.near)
	if err != nil {
		return cfg, usagef("--near: %v", err)
	}
	keep, err := neardup.ParseKeepPolicy(c.keep)
	if err != nil {
		return cfg, usagef("--keep: %v", err)
	}
	switch {
	case c.distance < 0 || c.distance > 16:
		return cfg, usagef("--distance %d: use 0 to 16", c.distance)
	case !(c.threshold > 0 && c.threshold <= 1):
		return cfg, usagef("--threshold %g: use a similarity in (0, 1]", c.threshold)
	case c.maxAge < 0:
		return cfg, usagef("--max-age %v: use 0 (never) or more", c.maxAge)
	case c.memoryLimit < 0:
		return cfg, usagef("--memory-limit %d: use 0 (none) or more bytes", c.memoryLimit)
	case c.cacheSize < 0:
		return cfg, usagef("--cache-size %d: use 0 or more bytes", c.cacheSize)
	case c.minFree < 0:
		return cfg, usagef("--min-free %d: use 0 (no watermark) or more bytes", c.minFree)
	case c.bandMemory < 0:
		return cfg, usagef("--band-memory %d: use 0 (no copy) or more bytes", c.bandMemory)
	case c.maxBody < 1 || c.maxBatch < 1 || c.maxInflight < 0:
		return cfg, usagef("--max-body, --max-batch: use 1 or more; --max-inflight: 0 or more")
	case c.maxConns < 0 || c.bodyMemory < 0:
		return cfg, usagef("--max-conns, --body-memory: use 0 (the default) or more")
	case c.maxBytes < 1:
		return cfg, usagef("--max-bytes %d: use 1 or more", c.maxBytes)
	case c.timeout <= 0 || c.shutdownTimeout <= 0 || c.refresh <= 0:
		return cfg, usagef("--timeout, --shutdown-timeout and --prescreen-refresh must be positive")
	case c.data == "":
		return cfg, usagef("--data: give the directory of the index")
	}
	if err := c.text.check(); err != nil {
		return cfg, err
	}
	cfg.data, cfg.cacheSize, cfg.minFree = c.data, int64(c.cacheSize), int64(c.minFree)
	if c.minFree == 0 {
		cfg.minFree = -1 // the flag's 0 is no watermark; the option's is the default
	}
	cfg.opt = neardup.Options{Pipeline: neardup.Pipeline{Near: near, Distance: distanceOption(c.distance), Threshold: c.threshold,
		Keep: keep, NoExtract: c.noExtract, Shingle: c.text.options(shingle.Uniform), Extract: extract.Options{MaxBytes: c.maxBytes}},
		MaxAge: c.maxAge, BandMemory: int64(c.bandMemory), NoVerify: c.noVerify, PrescreenRefresh: c.refresh}
	if c.bandMemory == 0 {
		cfg.opt.BandMemory = -1 // the flag's 0 is no copy; the option's is the default
	}
	if _, err := neardup.NewFingerprinter(cfg.opt); err != nil {
		return cfg, usagef("%v", err)
	}
	if cfg.redis, err = c.redis.options(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// bodyMemoryOrDefault returns --body-memory, or its default: an eighth of
// --memory-limit, as a body held while it is decoded and worked on takes about three
// times its size (the bytes, the parser's copy, the decoded strings), and the index
// needs the rest.
func (c *serveCmd) bodyMemoryOrDefault() int64 {
	switch {
	case c.bodyMemory > 0:
		return int64(c.bodyMemory)
	case c.memoryLimit > 0:
		return int64(c.memoryLimit) / 8
	}
	return 0 // server.DefaultBodyMemory
}

// storeFiles is how many file descriptors --max-conns leaves to the store (pebble keeps
// up to 1000 tables open), its write-ahead log and the process.
const storeFiles = 1100

// maxServeConns bounds --max-conns's default: each connection costs a goroutine and its
// buffers, about 10 KB, whatever the descriptor limit allows.
const maxServeConns = 10000

// maxConnsOrDefault returns --max-conns, or its default given the open files limit:
// what the limit leaves past the store and the health checks' reserve, between 64 and
// maxServeConns (0, server.DefaultMaxConns, when the limit is unknown).
func (c *serveCmd) maxConnsOrDefault(openFiles uint64) int {
	switch {
	case c.maxConns > 0:
		return c.maxConns
	case openFiles == 0:
		return 0
	case openFiles > storeFiles+64+16+maxServeConns:
		return maxServeConns
	}
	return max(64, int(openFiles)-storeFiles-16)
}

// tokens reads --tokens and NEARDUP_TOKENS.
func (c *serveCmd) tokens(getenv func(string) string) ([]server.Token, error) {
	var tokens []server.Token
	if c.tokensFile != "" {
		f, err := os.Open(c.tokensFile)
		if err != nil {
			return nil, fmt.Errorf("--tokens: %w", err)
		}
		defer f.Close()
		if tokens, err = server.ParseTokens(f); err != nil {
			return nil, fmt.Errorf("--tokens %s: %w", c.tokensFile, err)
		}
	}
	env, err := server.ParseTokensEnv(getenv("NEARDUP_TOKENS"))
	if err != nil {
		return nil, fmt.Errorf("NEARDUP_TOKENS: %w", err)
	}
	return append(tokens, env...), nil
}
