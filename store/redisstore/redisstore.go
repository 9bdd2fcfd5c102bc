package redisstore

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/internal/gate"
)

// Options configure Open.
type Options struct {
	// Addrs are host:port addresses of some of the cluster's nodes; the client learns
	// the others from them. At least one.
	Addrs []string
	// Username and Password authenticate (Redis ACL); empty for none.
	Username, Password string
	// TLS, if not nil, connects with TLS (rediss://).
	TLS *tls.Config
	// Prefix starts every key the store writes, so that several stores can share a
	// cluster: letters, digits, '-', '_' and '.'; "nd" when empty.
	Prefix string
	// Wait, when above 0, makes Apply and Write return only once Wait replicas of every
	// master the batch wrote to acknowledge it (Redis WAIT), or fail with ErrWait after
	// WaitTimeout (1 s when 0).
	Wait        int
	WaitTimeout time.Duration
	// LockTimeout is how old a pending transaction's intent must be before a writer it
	// blocks may abort it, as one whose writer died; 10 s when 0.
	LockTimeout time.Duration
	// Buckets is the number of buckets (Redis hashes) the postings with keys of up to
	// 16 bytes, of every namespace, are spread over, and the records too: a power of
	// two, DefaultBuckets when 0. It is fixed when a store is first opened; later Opens
	// use the store's, whatever this says. Choose about the postings the store will
	// hold divided by 50 (an add of the detector posts some 50: 25 LSH band keys, 20
	// SimHash table keys and a few more, so a bucket for each document), so that a
	// bucket holds some 50 fields and Redis keeps it as a listpack
	// (hash-max-listpack-entries, which CheckConfig wants at 256 or more): a few bytes
	// a posting instead of a key of its own. Fuller buckets take less memory (a key
	// costs some 100 bytes) but more of the masters' CPU, which scans a listpack's
	// fields on every lookup: four times as full cost an add a fifth more of the
	// masters' CPU for 4% less memory.
	Buckets int
}

// DefaultBuckets is Options.Buckets when 0: right for about a million documents of the
// detector (50 million postings) with hash-max-listpack-entries 512.
const DefaultBuckets = 1 << 20

// Buckets returns the store's number of buckets: the Options.Buckets it was created with,
// whatever the Options of this Open said.
func (db *DB) Buckets() int { return db.buckets }

// DB is a store.Store and store.Conditional on a Redis Cluster, which any number of
// processes may share: it keeps nothing in the process but a cache of committed
// transaction ids. See the package documentation for the key layout and the protocol
// that makes a batch atomic across hash slots. Safe for concurrent use.
type DB struct {
	c      *redis.ClusterClient
	prefix string
	opt    Options
	gate   *gate.Gate

	buckets int // Options.Buckets as the store has it
	// scans is the context of Records and Postings, cancelled by Close: a scan reads
	// every bucket of its kind, seconds at a million documents, and Close waits for the
	// calls under way, so that one stops at its next pipeline instead.
	scans     context.Context
	stopScans context.CancelFunc
	// short has a bit for each namespace this process has added to {meta}:short.
	short [1 << 16 / 64]atomic.Uint64
	// ordered are the namespaces kept in order (Order), replaced whole on a change.
	ordered atomic.Pointer[map[store.Namespace]bool]

	health health     // Health's
	ids    idBlock    // NextID's
	later  laterQueue // the committed transactions whose resolves wait
	// reads, preps and commits coalesce the calls of concurrent readers and
	// transactions, phase by phase (coalesce.go).
	reads   coalescer[*readReq]
	preps   coalescer[*prepReq]
	commits coalescer[*commitReq]

	mu        sync.Mutex
	committed map[string]bool // transactions known committed (final), bounded by maxCache
	// counts are the changes to each namespace's count of postings that this process
	// committed and has not yet added to the count keys: the next transaction's prepare
	// pipeline does, or Count.
	counts map[store.Namespace]int64
}

var _ store.Conditional = (*DB)(nil)

// ParseURL parses a --redis value: redis://[user[:password]@]host:port[,host:port...],
// or rediss:// for TLS (verified against the system roots; set Options.TLS for other
// settings).
func ParseURL(s string) (Options, error) {
	var o Options
	rest, ok := strings.CutPrefix(s, "redis://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "rediss://"); !ok {
			return o, fmt.Errorf("%w: %q: want redis://host:port[,host:port...] or rediss:// for TLS", ErrOptions, s)
		}
		o.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	rest = strings.TrimSuffix(rest, "/")
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		u, err := url.Parse("redis://" + rest[:i+1] + "localhost")
		if err != nil {
			return o, fmt.Errorf("%w: the user and password of %q: %v", ErrOptions, s, err)
		}
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
		rest = rest[i+1:]
	}
	for a := range strings.SplitSeq(rest, ",") {
		host, port, ok := strings.Cut(a, ":")
		if _, err := strconv.ParseUint(port, 10, 16); !ok || host == "" || err != nil {
			return o, fmt.Errorf("%w: address %q of %q: want host:port", ErrOptions, a, s)
		}
		o.Addrs = append(o.Addrs, a)
	}
	return o, nil
}

// Open connects to the cluster, checks that it answers, and reads the store's number
// of buckets (setting it to Options.Buckets for a new store). It starts no background
// work but a timer that resolves the last writes once the process stops writing.
func Open(opt Options) (*DB, error) {
	if len(opt.Addrs) == 0 {
		return nil, fmt.Errorf("%w: no address: give at least one host:port of the cluster", ErrOptions)
	}
	if opt.Prefix == "" {
		opt.Prefix = "nd"
	}
	for _, r := range opt.Prefix {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return nil, fmt.Errorf("%w: Prefix %q: use letters, digits, '-', '_' and '.'", ErrOptions, opt.Prefix)
		}
	}
	if opt.Wait < 0 {
		return nil, fmt.Errorf("%w: Wait %d: want 0 (no WAIT) or a number of replicas", ErrOptions, opt.Wait)
	}
	opt.Buckets = cmp.Or(opt.Buckets, DefaultBuckets)
	if opt.Buckets < 1 || opt.Buckets&(opt.Buckets-1) != 0 {
		return nil, fmt.Errorf("%w: Buckets %d: want a power of two", ErrOptions, opt.Buckets)
	}
	opt.WaitTimeout = cmp.Or(opt.WaitTimeout, time.Second)
	opt.LockTimeout = cmp.Or(opt.LockTimeout, 10*time.Second)
	c := redis.NewClusterClient(&redis.ClusterOptions{
		// A copy: the client appends the nodes it learns of to the slice it is given,
		// which would write into the caller's array.
		Addrs: slices.Clone(opt.Addrs), Username: opt.Username, Password: opt.Password, TLSConfig: opt.TLS,
		// The store's own retries (lock waits) sit above these; a dead master is
		// replaced within cluster-node-timeout, which the redirects ride out.
		MaxRedirects: 8,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisstore: connect to %v: %w", opt.Addrs, err)
	}
	db := &DB{c: c, prefix: opt.Prefix, opt: opt, gate: gate.New(), committed: map[string]bool{}, counts: map[store.Namespace]int64{}}
	db.scans, db.stopScans = context.WithCancel(context.Background())
	if err := db.readBuckets(ctx); err != nil {
		c.Close()
		return nil, err
	}
	db.later.flush = db.flushLater
	db.reads.send, db.preps.send, db.commits.send = db.sendReads, db.sendPrepares, db.sendCommits
	return db, nil
}

// layoutVersion is the version of the key layout and of what a field holds (see
// field.go), kept at {meta}:layout: a store of another version is refused, not misread.
// Version 3 added {meta}:short, which a store must have kept from its first posting.
const layoutVersion = "3"

// metaScript creates a store's number of buckets KEYS[1] and its layout version KEYS[2]
// (ARGV) unless it has a number of buckets already, and returns both as the store has
// them ("" for no version: a store of the first layout, which had none).
var metaScript = newScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SET', KEYS[1], ARGV[1])
  redis.call('SET', KEYS[2], ARGV[2])
end
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]) or ''}
`)

// readBuckets sets the store's number of buckets to Options.Buckets if it has none,
// and reads it into db.buckets; it refuses a store of another layout.
func (db *DB) readBuckets(ctx context.Context) error {
	var cmd *redis.Cmd
	if _, err := db.pipelined(ctx, func(p redis.Pipeliner) {
		cmd = metaScript.run(ctx, p, []string{db.metaKey(), db.layoutKey()}, db.opt.Buckets, layoutVersion)
	}); err != nil {
		return fmt.Errorf("redisstore: buckets: %w", err)
	}
	meta, err := cmd.StringSlice()
	if err != nil || len(meta) != 2 {
		return fmt.Errorf("redisstore: the store's number of buckets (%s) answered %q, %v", db.metaKey(), meta, err)
	}
	if meta[1] != layoutVersion {
		return fmt.Errorf("%w: the store at prefix %q has layout %q, this version reads %q: start a new store under another prefix (--redis-prefix), or delete this one's keys", ErrLayout, db.prefix, meta[1], layoutVersion)
	}
	n, err := strconv.Atoi(meta[0])
	if err != nil || n < 1 || n&(n-1) != 0 {
		return fmt.Errorf("redisstore: the store's number of buckets (%s): %q", db.metaKey(), meta[0])
	}
	db.buckets = n
	nss, err := db.c.SMembers(ctx, db.orderedMetaKey()).Result()
	if err != nil {
		return fmt.Errorf("redisstore: ordered namespaces: %w", err)
	}
	m := map[store.Namespace]bool{}
	for _, v := range nss {
		ns, err := strconv.ParseUint(v, 10, 16)
		if err != nil {
			return fmt.Errorf("redisstore: ordered namespace %q in %s", v, db.orderedMetaKey())
		}
		m[store.Namespace(ns)] = true
	}
	db.ordered.Store(&m)
	return nil
}

var _ store.Orderer = (*DB)(nil)

// Order keeps namespace ns in order from now on (see store.Orderer): its postings go in
// orderedShards buckets of their own, each with a sorted set of its keys, and Postings
// over it reads a page of every shard at a time rather than the whole namespace. Every
// process that opens the store after reads it; one that had it open already does not
// know, so call it before the first process writes to ns. One round trip.
func (db *DB) Order(ns store.Namespace) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	if db.isOrdered(ns) {
		return nil
	}
	if err := db.c.SAdd(context.Background(), db.orderedMetaKey(), int(ns)).Err(); err != nil {
		return db.failed(fmt.Errorf("redisstore: order: %w", err))
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	m := maps.Clone(*db.ordered.Load())
	m[ns] = true
	db.ordered.Store(&m)
	return nil
}

// isOrdered reports whether ns is kept in order.
func (db *DB) isOrdered(ns store.Namespace) bool {
	if m := db.ordered.Load(); m != nil {
		return (*m)[ns]
	}
	return false
}

// CheckConfig reads the settings of every master that the store's durability depends on
// and returns a warning for each that falls short: appendonly must be yes (or a crash
// loses everything since the last snapshot), appendfsync always or everysec,
// maxmemory-policy noeviction (an eviction drops postings and records), and
// cluster-node-timeout at most 15 s (failover takes that long, and writes to the dead
// master's slots fail meanwhile).
func (db *DB) CheckConfig(ctx context.Context) ([]string, error) {
	var mu sync.Mutex
	var warn []string
	err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		got := map[string]string{}
		for _, k := range []string{"appendonly", "appendfsync", "cluster-node-timeout", "hash-max-listpack-entries", "maxmemory-policy"} {
			m, err := n.ConfigGet(ctx, k).Result()
			if err != nil {
				return err
			}
			got[k] = m[k]
		}
		addr := n.Options().Addr
		mu.Lock()
		defer mu.Unlock()
		if got["appendonly"] != "yes" {
			warn = append(warn, fmt.Sprintf("redis %s: appendonly is %q: a crash loses the writes since the last RDB snapshot; set appendonly yes", addr, got["appendonly"]))
		}
		if got["appendfsync"] == "no" {
			warn = append(warn, fmt.Sprintf("redis %s: appendfsync is no: the OS decides when writes reach disk; set appendfsync everysec (or always)", addr))
		}
		if p := got["maxmemory-policy"]; p != "noeviction" {
			warn = append(warn, fmt.Sprintf("redis %s: maxmemory-policy is %s: a full master evicts postings and records, and documents acknowledged are lost; set noeviction (a full master then refuses writes, which the service answers 507)", addr, p))
		}
		if ms, err := strconv.Atoi(got["cluster-node-timeout"]); err == nil && ms > 15000 {
			warn = append(warn, fmt.Sprintf("redis %s: cluster-node-timeout is %d ms: writes to a dead master's slots fail that long before failover; set 15000 or less", addr, ms))
		}
		if n, err := strconv.Atoi(got["hash-max-listpack-entries"]); err == nil && n < 256 {
			warn = append(warn, fmt.Sprintf("redis %s: hash-max-listpack-entries is %d: buckets of more fields take several times the memory; set 512", addr, n))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: config get: %w", err)
	}
	slices.Sort(warn)
	return warn, nil
}

// failed returns err as the store's callers are to see it (after reloadOn): wrapping
// store.ErrNoSpace when a master refused a write for memory (noSpace),
// store.ErrUnavailable when the cluster could not answer for now (transient), as it is
// otherwise.
func (db *DB) failed(err error) error {
	if err = db.reloadOn(err); err == nil || errors.Is(err, store.ErrConflict) {
		return err
	}
	if transient(err) {
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return db.noSpace(err)
}

// reloadOn returns err, and when it is not an answer from Redis (a node that does not
// answer, as a dead master after its failover), asks the client to read the slot map
// again: it learns of a failover from a MOVED answer, which a dead node never gives.
func (db *DB) reloadOn(err error) error {
	var answer redis.Error
	if err != nil && !errors.Is(err, store.ErrConflict) && !errors.As(err, &answer) {
		db.c.ReloadState(context.Background())
	}
	return err
}

// transient reports whether err says the cluster could not answer for now: no
// connection to a node (refused, reset, timed out, none free in the pool), or a node's
// answer that it cannot serve the slot yet (a failover, a resharding or a restart under
// way). Not ErrWait: that write is on the masters, and the same add made again may
// write nothing more, and so wait for no replica.
func transient(err error) bool {
	var ne net.Error
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, redis.ErrPoolTimeout), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne):
		return true
	}
	var answer redis.Error
	if errors.As(err, &answer) {
		for _, p := range []string{"CLUSTERDOWN", "TRYAGAIN", "MASTERDOWN", "LOADING", "READONLY", "NOREPLICAS"} {
			if strings.HasPrefix(answer.Error(), p) {
				return true
			}
		}
	}
	return false
}

// Close waits for the calls in progress and closes the connections. A scan under way
// (Records, Postings) stops at its next pipeline and returns an error wrapping
// store.ErrClosed rather than hold Close for the rest of the store.
func (db *DB) Close() error {
	db.stopScans()
	if !db.gate.Close() {
		return store.ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	db.later.disarm()
	// Best effort: readers resolve what is left by the statuses, and Count says a dead
	// process's changes may be missing.
	_ = db.resolveLater(ctx)
	_ = db.flushCounts(ctx)
	if err := db.c.Close(); err != nil {
		return fmt.Errorf("redisstore: close: %w", err)
	}
	return nil
}
