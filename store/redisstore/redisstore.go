package redisstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
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
}

// DB is a store.Store and store.Conditional on a Redis Cluster, which any number of
// processes may share: it keeps nothing in the process but a cache of committed
// transaction ids. See the package documentation for the key layout and the protocol
// that makes a batch atomic across hash slots. Safe for concurrent use.
type DB struct {
	c      *redis.ClusterClient
	prefix string
	opt    Options
	gate   *gate.Gate

	mu        sync.Mutex
	committed map[string]bool // transactions known committed (final), bounded by maxCache
	// counts are the changes to each namespace's count of postings that this process
	// resolved and has not yet added to the count keys: the next transaction's prepare
	// pipeline does, or Count.
	counts map[store.Namespace]int64
}

var _ store.Conditional = (*DB)(nil)

// maxCache bounds DB.committed; past it the cache starts again empty.
const maxCache = 1 << 16

// statusTTL is how long a transaction's status outlives the resolution of all its
// intents: a reader that read an intent before it was resolved looks the status up
// afterwards, within this time.
const statusTTL = 10 * time.Minute

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

// Open connects to the cluster and checks that it answers. It starts no background
// work; the connections open as calls need them.
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
	opt.WaitTimeout = cmp.Or(opt.WaitTimeout, time.Second)
	opt.LockTimeout = cmp.Or(opt.LockTimeout, 10*time.Second)
	c := redis.NewClusterClient(&redis.ClusterOptions{
		Addrs: opt.Addrs, Username: opt.Username, Password: opt.Password, TLSConfig: opt.TLS,
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
	return &DB{c: c, prefix: opt.Prefix, opt: opt, gate: gate.New(), committed: map[string]bool{}, counts: map[store.Namespace]int64{}}, nil
}

// CheckConfig reads the settings of every master that the store's durability depends on
// and returns a warning for each that falls short: appendonly must be yes (or a crash
// loses everything since the last snapshot), appendfsync always or everysec, and
// cluster-node-timeout at most 15 s (failover takes that long, and writes to the dead
// master's slots fail meanwhile).
func (db *DB) CheckConfig(ctx context.Context) ([]string, error) {
	var mu sync.Mutex
	var warn []string
	err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		got := map[string]string{}
		for _, k := range []string{"appendonly", "appendfsync", "cluster-node-timeout"} {
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
		if ms, err := strconv.Atoi(got["cluster-node-timeout"]); err == nil && ms > 15000 {
			warn = append(warn, fmt.Sprintf("redis %s: cluster-node-timeout is %d ms: writes to a dead master's slots fail that long before failover; set 15000 or less", addr, ms))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: config get: %w", err)
	}
	slices.Sort(warn)
	return warn, nil
}

// Keys. Every key is prefix:{tag}:rest, where the hash tag decides the slot: a hash of
// the posting's namespace and key, or of the record id, spreads them over the cluster;
// the tag never comes from the caller's bytes, which may hold braces.

func tag(b []byte) string { return fmt.Sprintf("%016x", xxhash.Sum64(b)) }

func (db *DB) postingKey(ns store.Namespace, key []byte) string {
	h := binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(key)), uint16(ns))
	h = append(h, key...)
	return db.prefix + ":{" + tag(h) + "}:p" + strconv.Itoa(int(ns)) + ":" + string(key)
}

func (db *DB) recordKey(id uint64) string {
	b := binary.BigEndian.AppendUint64(nil, id)
	return db.prefix + ":{" + tag(b) + "}:r" + string(b)
}

func (db *DB) statusKey(txn string) string {
	return db.prefix + ":{" + hex.EncodeToString([]byte(txn)) + "}:t"
}

func (db *DB) counterKey() string { return db.prefix + ":{id}:n" }

func (db *DB) countKey(ns store.Namespace) string {
	return db.prefix + ":{count}:" + strconv.Itoa(int(ns))
}

// counted adds the changes that resolve scripts answered for keys to db.counts.
func (db *DB) counted(keys []string, cmds []redis.Cmder) {
	db.mu.Lock()
	defer db.mu.Unlock()
	for i, k := range keys {
		c, ok := cmds[i].(*redis.Cmd)
		if !ok {
			continue
		}
		n, err := c.Int64()
		if err != nil || n == 0 {
			continue
		}
		if ns, _, ok := db.parseKey(k); ok {
			db.counts[ns] += n
		}
	}
}

// takeCounts returns db.counts and empties it.
func (db *DB) takeCounts() map[store.Namespace]int64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.counts) == 0 {
		return nil
	}
	out := db.counts
	db.counts = map[store.Namespace]int64{}
	return out
}

var _ store.Counter = (*DB)(nil)

// Count returns the number of postings in namespace ns: a count key that every process
// adds its resolved changes to with its next write (Count adds this process's first).
// So it lags by the last write of each other process, and misses the last write of a
// process that died after it. Two round trips at most.
func (db *DB) Count(ns store.Namespace) (int64, error) {
	if !db.gate.Enter() {
		return 0, store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	if err := db.flushCounts(ctx); err != nil {
		return 0, err
	}
	n, err := db.c.Get(ctx, db.countKey(ns)).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, db.reloadOn(fmt.Errorf("redisstore: count: %w", err))
	}
	return n, nil
}

// flushCounts adds db.counts to the count keys.
func (db *DB) flushCounts(ctx context.Context) error {
	counts := db.takeCounts()
	if counts == nil {
		return nil
	}
	_, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for ns, n := range counts {
			p.IncrBy(ctx, db.countKey(ns), n)
		}
		return nil
	})
	if err != nil {
		return db.reloadOn(fmt.Errorf("redisstore: count: %w", err))
	}
	return nil
}

// parseKey returns the namespace and posting key of a posting key from a SCAN, or false
// for any other key.
func (db *DB) parseKey(k string) (store.Namespace, []byte, bool) {
	rest, ok := strings.CutPrefix(k, db.prefix+":{")
	if !ok || len(rest) < 16+3 || rest[16:19] != "}:p" {
		return 0, nil, false
	}
	rest = rest[19:]
	num, key, ok := strings.Cut(rest, ":")
	ns, err := strconv.ParseUint(num, 10, 16)
	if !ok || err != nil {
		return 0, nil, false
	}
	return store.Namespace(ns), []byte(key), true
}

// A transaction id: 8 bytes of start time (Unix ns, big-endian, so that older sorts
// first: the older of two transactions wins a conflict) and 8 random bytes.
func newTxn(start time.Time) string {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 16), uint64(start.UnixNano()))
	b = append(b, make([]byte, 8)...)
	_, _ = rand.Read(b[8:]) // never fails
	return string(b)
}

func txnStart(txn string) time.Time {
	if len(txn) != 16 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64([]byte(txn))))
}

// write is the intent a batch places on one key.
type write struct {
	key    string
	fields []any // field, value pairs
	cond   string
}

// plan turns a batch into one write per key, the later of two operations on the same
// record or posting winning, and returns the largest record id it puts.
func (db *DB) plan(b *store.Batch, conds []store.Cond) ([]write, uint64, bool, error) {
	var order []string
	ids := map[string]map[uint64]bool{} // key -> id -> added
	recs := map[uint64]*[]byte{}        // nil pointer target: deleted
	var recOrder []uint64
	var maxID uint64
	puts := false
	for o := range b.All() {
		switch o.Kind {
		case store.OpPutRecord, store.OpDeleteRecord:
			if _, ok := recs[o.ID]; !ok {
				recOrder = append(recOrder, o.ID)
			}
			if o.Kind == store.OpPutRecord {
				v := append([]byte{}, o.Data...)
				recs[o.ID] = &v
				maxID, puts = max(maxID, o.ID), true
			} else {
				recs[o.ID] = nil
			}
		default:
			k := db.postingKey(o.Namespace, o.Data)
			m, ok := ids[k]
			if !ok {
				m = map[uint64]bool{}
				ids[k] = m
				order = append(order, k)
			}
			m[o.ID] = o.Kind == store.OpAdd
		}
	}
	condOf := map[string]string{}
	for _, c := range conds {
		k := db.postingKey(c.Namespace, c.Key)
		if _, ok := ids[k]; !ok {
			return nil, 0, false, fmt.Errorf("%w: a condition on namespace %d key %q, which the batch does not write: condition only keys the batch adds to or removes from", ErrOptions, c.Namespace, c.Key)
		}
		s := make([]byte, 1, 1+8*len(c.IDs))
		s[0] = '='
		for _, id := range c.IDs {
			s = binary.BigEndian.AppendUint64(s, id)
		}
		condOf[k] = string(s)
	}
	var ws []write
	for _, k := range order {
		w := write{key: k, cond: condOf[k]}
		m := ids[k]
		sorted := slices.Sorted(func(yield func(uint64) bool) {
			for id := range m {
				if !yield(id) {
					return
				}
			}
		})
		for _, id := range sorted {
			sign := "-"
			if m[id] {
				sign = "+"
			}
			w.fields = append(w.fields, sign+string(binary.BigEndian.AppendUint64(nil, id)), "")
		}
		ws = append(ws, w)
	}
	for _, id := range recOrder {
		w := write{key: db.recordKey(id)}
		if v := recs[id]; v != nil {
			w.fields = []any{"n", *v}
		} else {
			w.fields = []any{"d", "1"}
		}
		ws = append(ws, w)
	}
	return ws, maxID, puts, nil
}

// Apply applies b atomically: see the package documentation for how. It returns once
// every key is written on its master (and, with Options.Wait, on that many replicas).
func (db *DB) Apply(b *store.Batch) error { return db.ApplyIf(b, nil) }

// Write is Apply: a write that returns is on the masters, and Redis's own fsync policy
// (appendfsync) decides when it is on disk.
func (db *DB) Write(b *store.Batch) error { return db.ApplyIf(b, nil) }

// Sync does nothing: Write returned only once the masters had the batch. See
// Options.Wait for replicas.
func (db *DB) Sync() error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	db.gate.Leave()
	return nil
}

// ApplyIf applies b as Apply does if every condition holds; see store.Conditional. It
// costs, without contention, three pipelined round trips to each master the batch
// touches and two to the master of its transaction's status key.
func (db *DB) ApplyIf(b *store.Batch, conds []store.Cond) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	if b.Len() == 0 {
		return nil
	}
	ws, maxID, puts, err := db.plan(b, conds)
	if err != nil {
		return err
	}
	ctx := context.Background()
	start := time.Now()
	for {
		err := db.try(ctx, newTxn(start), ws, maxID, puts)
		if !errors.Is(err, errWounded) {
			return db.reloadOn(err)
		}
		// An older transaction took a key this one held: start again, keeping the
		// start time, so that this one ages and wins in the end.
		time.Sleep(time.Duration(mrand.IntN(2000)) * time.Microsecond)
	}
}

// try runs one attempt of a transaction: prepare (place an intent on every key, checking
// conditions), commit (set its status, the one atomic step that decides it), resolve
// (apply the intents and drop them).
func (db *DB) try(ctx context.Context, txn string, ws []write, maxID uint64, puts bool) error {
	placed := make([]bool, len(ws))
	pending := make([]int, len(ws))
	for i := range pending {
		pending[i] = i
	}
	deadline := time.Now().Add(db.opt.LockTimeout + 5*time.Second)
	counts := db.takeCounts()
	for len(pending) > 0 {
		cmds, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range pending {
				args := append([]any{txn, ws[i].cond}, ws[i].fields...)
				p.Eval(ctx, prepScript, []string{ws[i].key}, args...)
			}
			if puts {
				p.Eval(ctx, bumpScript, []string{db.counterKey()}, string(binary.BigEndian.AppendUint64(nil, maxID)))
				puts = false
			}
			// The counts of earlier writes ride along: no round trip of their own.
			for ns, n := range counts {
				p.IncrBy(ctx, db.countKey(ns), n)
			}
			counts = nil
			return nil
		})
		if err != nil {
			return db.abort(ctx, txn, ws, placed, fmt.Errorf("redisstore: prepare: %w", err))
		}
		var locked []int
		blockers := map[string][]int{}
		conflict := false
		for j, i := range pending {
			r, _ := cmds[j].(*redis.Cmd).Slice()
			switch {
			case len(r) == 1 && r[0] == "OK":
				placed[i] = true
			case len(r) == 1 && r[0] == "C":
				conflict = true
			case len(r) == 2 && r[0] == "L":
				holder, _ := r[1].(string)
				locked = append(locked, i)
				blockers[holder] = append(blockers[holder], i)
			default:
				return db.abort(ctx, txn, ws, placed, fmt.Errorf("redisstore: prepare answered %v", r))
			}
		}
		if conflict {
			return db.abort(ctx, txn, ws, placed, store.ErrConflict)
		}
		pending = locked
		if len(pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return db.abort(ctx, txn, ws, placed, fmt.Errorf("redisstore: keys stayed locked for %v by other writers", db.opt.LockTimeout+5*time.Second))
		}
		// Resolve what can be, wound younger holders, wait for older ones.
		waited := false
		for holder, is := range blockers {
			done, err := db.settle(ctx, txn, holder, ws, is)
			if err != nil {
				return db.abort(ctx, txn, ws, placed, err)
			}
			waited = waited || !done
		}
		if s, err := db.c.Get(ctx, db.statusKey(txn)).Result(); err == nil && s == "a" {
			return db.abort(ctx, txn, ws, placed, errWounded)
		}
		if waited {
			time.Sleep(time.Duration(200+mrand.IntN(800)) * time.Microsecond)
		}
	}
	ok, err := db.c.SetNX(ctx, db.statusKey(txn), "c", 0).Result()
	if err != nil {
		return db.abort(ctx, txn, ws, placed, fmt.Errorf("redisstore: commit: %w", err))
	}
	if !ok {
		return db.abort(ctx, txn, ws, placed, errWounded)
	}
	if err := db.resolve(ctx, txn, ws, placed, true); err != nil {
		// Committed: readers apply the intents left, and the next writer of each key
		// resolves them, as long as the status lives; the resolve may have set its
		// expiry.
		return errors.Join(err, db.c.Persist(ctx, db.statusKey(txn)).Err())
	}
	return nil
}

// settle deals with transaction holder, which holds keys ws[is] that txn needs: it
// resolves its intents if it has ended, aborts it if it is younger than txn or older
// than LockTimeout, and otherwise reports false: txn waits for it.
func (db *DB) settle(ctx context.Context, txn, holder string, ws []write, is []int) (bool, error) {
	s, err := db.c.Get(ctx, db.statusKey(holder)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("redisstore: status: %w", err)
	}
	if s == "" {
		if holder < txn && time.Since(txnStart(holder)) < db.opt.LockTimeout {
			return false, nil
		}
		if _, err := db.c.SetNX(ctx, db.statusKey(holder), "a", time.Hour).Result(); err != nil {
			return false, fmt.Errorf("redisstore: abort: %w", err)
		}
		if s, err = db.c.Get(ctx, db.statusKey(holder)).Result(); err != nil {
			return false, fmt.Errorf("redisstore: status: %w", err)
		}
	}
	var keys []string
	cmds, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range is {
			keys = append(keys, ws[i].key)
			p.Eval(ctx, resolveScript, []string{ws[i].key}, holder, boolArg(s == "c"))
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("redisstore: resolve: %w", err)
	}
	db.counted(keys, cmds)
	return true, nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// abort marks txn aborted unless it committed, drops its intents, and returns cause.
func (db *DB) abort(ctx context.Context, txn string, ws []write, placed []bool, cause error) error {
	if _, err := db.c.SetNX(ctx, db.statusKey(txn), "a", time.Hour).Result(); err != nil {
		return errors.Join(cause, fmt.Errorf("redisstore: abort: %w", err))
	}
	if err := db.resolve(ctx, txn, ws, placed, false); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// resolve applies (commit) or drops txn's intents on the keys placed, in one pipeline,
// followed by a WAIT on every master with Options.Wait. A commit's status expires
// statusTTL after it.
func (db *DB) resolve(ctx context.Context, txn string, ws []write, placed []bool, commit bool) error {
	if !commit || db.opt.Wait == 0 {
		var keys []string
		cmds, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, w := range ws {
				if placed[i] {
					keys = append(keys, w.key)
					p.Eval(ctx, resolveScript, []string{w.key}, txn, boolArg(commit))
				}
			}
			if commit {
				p.Expire(ctx, db.statusKey(txn), statusTTL)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("redisstore: resolve: %w", err)
		}
		db.counted(keys, cmds)
		return nil
	}
	// WAIT counts the replicas that acknowledged the writes made on its own
	// connection, so each master gets its resolves and its WAIT in one pipeline.
	byNode := map[*redis.Client][]string{}
	for i, w := range ws {
		if placed[i] {
			n, err := db.c.MasterForKey(ctx, w.key)
			if err != nil {
				return fmt.Errorf("redisstore: resolve: %w", err)
			}
			byNode[n] = append(byNode[n], w.key)
		}
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for n, keys := range byNode {
		wg.Go(func() {
			var wait *redis.Cmd
			cmds, err := n.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range keys {
					p.Eval(ctx, resolveScript, []string{k}, txn, "1")
				}
				wait = p.Do(ctx, "wait", db.opt.Wait, db.opt.WaitTimeout.Milliseconds())
				return nil
			})
			if err == nil {
				db.counted(keys, cmds)
			}
			if got, _ := wait.Int64(); err == nil && got < int64(db.opt.Wait) {
				err = fmt.Errorf("%w: %d of %d replicas of %s within %v", ErrWait, got, db.opt.Wait, n.Options().Addr, db.opt.WaitTimeout)
			}
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("redisstore: resolve: %w", err)
	}
	if err := db.c.Expire(ctx, db.statusKey(txn), statusTTL).Err(); err != nil {
		return fmt.Errorf("redisstore: expire status: %w", err)
	}
	return nil
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

// committedTxn reports whether txn committed, from the cache or its status key.
func (db *DB) committedTxn(ctx context.Context, txn string) (bool, error) {
	db.mu.Lock()
	ok := db.committed[txn]
	db.mu.Unlock()
	if ok {
		return true, nil
	}
	s, err := db.c.Get(ctx, db.statusKey(txn)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("redisstore: status: %w", err)
	}
	if s != "c" {
		return false, nil
	}
	db.mu.Lock()
	if len(db.committed) >= maxCache {
		clear(db.committed)
	}
	db.committed[txn] = true
	db.mu.Unlock()
	return true, nil
}

// statuses remembers, for the keys one call reads, the status each transaction was found
// in, so that a transaction that commits while the call looks statuses up is seen in all
// of its keys or in none: nil for a call that reads one key.
type statuses map[string]bool

// committed is committedTxn through m.
func (m statuses) committed(ctx context.Context, db *DB, txn string) (bool, error) {
	if c, ok := m[txn]; ok {
		return c, nil
	}
	c, err := db.committedTxn(ctx, txn)
	if m != nil && err == nil {
		m[txn] = c
	}
	return c, err
}

// visibleIDs returns the ids of a posting hash as committed transactions left them, in
// ascending order.
func (db *DB) visibleIDs(ctx context.Context, h map[string]string, m statuses) ([]uint64, error) {
	apply := false
	if l, ok := h["L"]; ok {
		var err error
		if apply, err = m.committed(ctx, db, l); err != nil {
			return nil, err
		}
	}
	set := map[uint64]bool{}
	for f := range h {
		if len(f) == 8 {
			set[binary.BigEndian.Uint64([]byte(f))] = true
		}
	}
	if apply {
		for f := range h {
			if len(f) == 9 {
				set[binary.BigEndian.Uint64([]byte(f[1:]))] = f[0] == '+'
			}
		}
	}
	out := make([]uint64, 0, len(set))
	for id, in := range set {
		if in {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

// visibleRecord returns the record of a record hash as committed transactions left it.
func (db *DB) visibleRecord(ctx context.Context, h map[string]string, m statuses) ([]byte, bool, error) {
	v, ok := h["v"]
	if l, locked := h["L"]; locked {
		c, err := m.committed(ctx, db, l)
		if err != nil {
			return nil, false, err
		}
		if c {
			if n, put := h["n"]; put {
				v, ok = n, true
			}
			if _, del := h["d"]; del {
				v, ok = "", false
			}
		}
	}
	if !ok {
		return nil, false, nil
	}
	return []byte(v), true, nil
}

// Record returns the record under id: one round trip, two when a transaction is
// writing it.
func (db *DB) Record(id uint64) ([]byte, bool, error) {
	if !db.gate.Enter() {
		return nil, false, store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	h, err := db.c.HGetAll(ctx, db.recordKey(id)).Result()
	if err != nil {
		return nil, false, db.reloadOn(fmt.Errorf("redisstore: record %d: %w", id, err))
	}
	return db.visibleRecord(ctx, h, nil)
}

// IDs reads the posting in one round trip (two when a transaction is writing it), then
// calls fn.
func (db *DB) IDs(ns store.Namespace, key []byte, fn func(id uint64) bool) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	h, err := db.c.HGetAll(ctx, db.postingKey(ns, key)).Result()
	if err != nil {
		return db.reloadOn(fmt.Errorf("redisstore: ids: %w", err))
	}
	ids, err := db.visibleIDs(ctx, h, nil)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !fn(id) {
			break
		}
	}
	return nil
}

// scan returns every key of the store matching pattern (after the prefix), from every
// master.
func (db *DB) scan(ctx context.Context, pattern string) ([]string, error) {
	var mu sync.Mutex
	var keys []string
	err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		it := n.Scan(ctx, 0, db.prefix+pattern, 1000).Iterator()
		var mine []string
		for it.Next(ctx) {
			mine = append(mine, it.Val())
		}
		mu.Lock()
		keys = append(keys, mine...)
		mu.Unlock()
		return it.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("redisstore: scan: %w", err)
	}
	return keys, nil
}

// hashes reads the hashes of keys, pipelined.
func (db *DB) hashes(ctx context.Context, keys []string) ([]map[string]string, error) {
	out := make([]map[string]string, 0, len(keys))
	for chunk := range slices.Chunk(keys, 4096) {
		cmds, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range chunk {
				p.HGetAll(ctx, k)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("redisstore: read: %w", err)
		}
		for _, c := range cmds {
			out = append(out, c.(*redis.MapStringStringCmd).Val())
		}
	}
	return out, nil
}

// Records scans every master for record keys, reads them, and calls fn in id order. It
// holds every record in memory meanwhile: a tool for small stores and tests, not for a
// replica's startup, which reads nothing in full.
func (db *DB) Records(fn func(id uint64, rec []byte) bool) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	keys, err := db.scan(ctx, ":{*}:r*")
	if err != nil {
		return err
	}
	type rec struct {
		id uint64
		v  []byte
	}
	var recs []rec
	var rkeys []string
	var ids []uint64
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, db.prefix+":{")
		if ok && len(rest) == 16+3+8 && rest[16:19] == "}:r" {
			rkeys = append(rkeys, k)
			ids = append(ids, binary.BigEndian.Uint64([]byte(rest[19:])))
		}
	}
	hs, err := db.hashes(ctx, rkeys)
	if err != nil {
		return err
	}
	m := statuses{}
	for i, h := range hs {
		v, ok, err := db.visibleRecord(ctx, h, m)
		if err != nil {
			return err
		}
		if ok {
			recs = append(recs, rec{ids[i], v})
		}
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.id, b.id) })
	for _, r := range recs {
		if !fn(r.id, r.v) {
			break
		}
	}
	return nil
}

// Postings scans every master for the keys of ns, reads them, and calls fn in the
// order of store.Store.Postings. Like Records, it holds them all in memory meanwhile.
func (db *DB) Postings(ns store.Namespace, fn func(key []byte, id uint64) bool) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	keys, err := db.scan(ctx, ":{*}:p"+strconv.Itoa(int(ns))+":*")
	if err != nil {
		return err
	}
	type entry struct {
		key []byte
		id  uint64
	}
	var pkeys []string
	var names [][]byte
	for _, k := range keys {
		// The pattern's * may match across the namespace: parse to be sure.
		if kns, key, ok := db.parseKey(k); ok && kns == ns {
			pkeys = append(pkeys, k)
			names = append(names, key)
		}
	}
	hs, err := db.hashes(ctx, pkeys)
	if err != nil {
		return err
	}
	var es []entry
	m := statuses{}
	for i, h := range hs {
		ids, err := db.visibleIDs(ctx, h, m)
		if err != nil {
			return err
		}
		for _, id := range ids {
			es = append(es, entry{names[i], id})
		}
	}
	slices.SortFunc(es, func(a, b entry) int {
		return cmp.Or(cmp.Compare(len(a.key), len(b.key)), strings.Compare(string(a.key), string(b.key)), cmp.Compare(a.id, b.id))
	})
	for _, e := range es {
		if !fn(e.key, e.id) {
			break
		}
	}
	return nil
}

// NextID increments the store's id counter, which Apply raises to every record id it
// puts: one round trip.
func (db *DB) NextID() (uint64, error) {
	if !db.gate.Enter() {
		return 0, store.ErrClosed
	}
	defer db.gate.Leave()
	s, err := db.c.Eval(context.Background(), nextScript, []string{db.counterKey()}).Text()
	if err != nil {
		if strings.Contains(err.Error(), "NOID") {
			return 0, errNoID
		}
		return 0, db.reloadOn(fmt.Errorf("redisstore: next id: %w", err))
	}
	if len(s) != 8 {
		return 0, fmt.Errorf("redisstore: next id: counter of %d bytes", len(s))
	}
	id := binary.BigEndian.Uint64([]byte(s))
	if id == math.MaxUint64 {
		return 0, errNoID
	}
	return id, nil
}

// Close waits for the calls in progress and closes the connections.
func (db *DB) Close() error {
	if !db.gate.Close() {
		return store.ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = db.flushCounts(ctx) // best effort: Count says a dead process's changes may be missing
	if err := db.c.Close(); err != nil {
		return fmt.Errorf("redisstore: close: %w", err)
	}
	return nil
}

var _ store.MultiReader = (*DB)(nil)

// IDsMany reads every posting in one pipeline: one round trip to each master, in
// parallel (and one more for each transaction found writing them). It sees every batch
// whole or not at all: a batch shows resolved in a key only once its status says
// committed, and each status is looked up once, after every key is read.
func (db *DB) IDsMany(keys []store.Key) ([][]uint64, error) {
	if !db.gate.Enter() {
		return nil, store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = db.postingKey(k.Namespace, k.Key)
	}
	hs, err := db.hashes(ctx, names)
	if err != nil {
		return nil, db.reloadOn(err)
	}
	out := make([][]uint64, len(keys))
	m := statuses{}
	for i, h := range hs {
		if out[i], err = db.visibleIDs(ctx, h, m); err != nil {
			return nil, err
		}
		if len(out[i]) == 0 {
			out[i] = nil
		}
	}
	return out, nil
}

// RecordsMany reads every record in one pipeline, as IDsMany does.
func (db *DB) RecordsMany(ids []uint64) ([][]byte, []bool, error) {
	if !db.gate.Enter() {
		return nil, nil, store.ErrClosed
	}
	defer db.gate.Leave()
	ctx := context.Background()
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = db.recordKey(id)
	}
	hs, err := db.hashes(ctx, names)
	if err != nil {
		return nil, nil, db.reloadOn(err)
	}
	recs, oks := make([][]byte, len(ids)), make([]bool, len(ids))
	m := statuses{}
	for i, h := range hs {
		if recs[i], oks[i], err = db.visibleRecord(ctx, h, m); err != nil {
			return nil, nil, err
		}
	}
	return recs, oks, nil
}
