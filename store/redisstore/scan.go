package redisstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// bucketKeys returns the buckets of the store whose tag matches pattern (after the
// prefix), from every master, in no order; keep tells the buckets wanted.
func (db *DB) bucketKeys(ctx context.Context, pattern string, keep func(kind byte, ns store.Namespace) bool) ([]string, error) {
	keys, err := db.scan(ctx, pattern+"*")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range keys {
		if kind, ns, ok := db.parseBucket(k); ok && keep(kind, ns) && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	return out, nil
}

// listBuckets returns the n buckets named by name, or when the cluster holds fewer
// than 4n keys (size), those bucketKeys finds with pattern and keep: a bucket read by
// name costs a command whether it exists or not, and a SCAN looks at every key of the
// cluster, some two million at a million documents.
func (db *DB) listBuckets(ctx context.Context, size int64, n int, name func(k []byte, b uint64) []byte,
	pattern string, keep func(kind byte, ns store.Namespace) bool) ([]string, error) {
	if size < 4*int64(n) {
		return db.bucketKeys(ctx, pattern, keep)
	}
	keys := make([]string, n)
	var buf []byte
	for b := range keys {
		buf = name(buf[:0], uint64(b))
		keys[b] = string(buf)
	}
	return keys, nil
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

// bucketFields reads whole buckets, pipelined, and calls fn with each field of each
// bucket (the committed value and the intent on it) in no order.
func (db *DB) bucketFields(ctx context.Context, keys []string, fn func(bucket int, f string, v fieldValue) error) error {
	for start := 0; start < len(keys); start += 2048 {
		chunk := keys[start:min(len(keys), start+2048)]
		cmds, err := db.pipelined(ctx, func(p redis.Pipeliner) {
			for _, k := range chunk {
				p.HGetAll(ctx, k)
			}
		})
		if err != nil {
			return fmt.Errorf("redisstore: read: %w", err)
		}
		for i := range chunk {
			for f, raw := range cmds[i].(*redis.MapStringStringCmd).Val() {
				var v fieldValue
				if err := readField(&v, raw, true); err != nil {
					return fmt.Errorf("redisstore: read: %w", err)
				}
				if err := fn(start+i, f, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Records scans every master for record buckets, reads them, and calls fn in id
// order. It holds every record in memory meanwhile: a tool for small stores and tests,
// not for a replica's startup, which reads nothing in full.
func (db *DB) Records(fn func(id uint64, rec []byte) bool) (err error) {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	defer db.stoppedScan(&err)
	ctx := db.scans
	keys, err := db.bucketKeys(ctx, ":{r*}", func(kind byte, _ store.Namespace) bool { return kind == kindRecord })
	if err != nil {
		return err
	}
	type rec struct {
		id uint64
		v  []byte
	}
	var recs []rec
	m := statuses{}
	err = db.bucketFields(ctx, keys, func(_ int, f string, v fieldValue) error {
		if len(f) != 8 {
			return fmt.Errorf("redisstore: a record bucket holds field %q", f)
		}
		r, ok, err := db.visibleRecord(ctx, v, m)
		if ok {
			recs = append(recs, rec{binary.BigEndian.Uint64([]byte(f)), r})
		}
		return err
	})
	if err != nil {
		return db.failed(err)
	}
	slices.SortFunc(recs, func(a, b rec) int { return cmp.Compare(a.id, b.id) })
	for _, r := range recs {
		if !fn(r.id, r.v) {
			break
		}
	}
	return nil
}

// Postings reads the buckets of ns (listBuckets), and the shared ones when ns has had a
// short key, and calls fn in the order of store.Store.Postings. Like Records, it holds
// them all in memory meanwhile.
func (db *DB) Postings(ns store.Namespace, fn func(key []byte, id uint64) bool) (err error) {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	defer db.stoppedScan(&err)
	ctx := db.scans
	if db.isOrdered(ns) {
		return db.orderedPostings(ctx, ns, fn)
	}
	size, err := db.c.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("redisstore: dbsize: %w", err)
	}
	long, err := db.listBuckets(ctx, size, db.longBuckets(), func(k []byte, b uint64) []byte { return db.appendLongBucket(k, ns, b) },
		":{p"+strconv.Itoa(int(ns))+".*}", func(kind byte, kns store.Namespace) bool { return kind == kindPosting && kns == ns })
	if err != nil {
		return err
	}
	var short []string
	if has, err := db.c.SIsMember(ctx, db.shortMetaKey(), int(ns)).Result(); err != nil {
		return fmt.Errorf("redisstore: %s: %w", db.shortMetaKey(), err)
	} else if has {
		short, err = db.listBuckets(ctx, size, db.buckets, db.appendSharedBucket,
			":{s*}", func(kind byte, _ store.Namespace) bool { return kind == kindShared })
		if err != nil {
			return err
		}
	}
	keys := append(long, short...)
	var es []entry
	m := statuses{}
	err = db.bucketFields(ctx, keys, func(i int, f string, v fieldValue) error {
		if i >= len(long) {
			fns, key, ok := sharedField(f)
			if !ok {
				return fmt.Errorf("redisstore: a bucket holds field %q", f)
			}
			if fns != ns {
				return nil
			}
			f = key
		}
		ids, err := db.visibleIDs(ctx, v, m)
		for _, id := range ids {
			es = append(es, entry{f, id})
		}
		return err
	})
	if err != nil {
		return db.failed(err)
	}
	slices.SortFunc(es, entry.compare)
	for _, e := range es {
		if !fn([]byte(e.key), e.id) {
			break
		}
	}
	return nil
}

// stoppedScan makes the error of a scan that Close stopped store.ErrClosed.
func (db *DB) stoppedScan(err *error) {
	if *err != nil && db.scans.Err() != nil {
		*err = fmt.Errorf("%w: a scan stopped by Close (%w)", store.ErrClosed, *err)
	}
}

// markShort adds to {meta}:short the namespaces of b's added postings that go in the
// shared buckets, before any of them can be seen: a scan of a namespace not in the set
// skips those buckets, which hold nearly every posting of a store (the band and SimHash
// table keys), so that the pre-screen's scan of URLs and main-text hashes reads their
// buckets alone. Each namespace costs a process one SADD, the first time it writes one.
func (db *DB) markShort(ctx context.Context, b *store.Batch) error {
	var nss []store.Namespace
	for o := range b.All() {
		if o.Kind == store.OpAdd && len(o.Data) <= shortKey && !db.markedShort(o.Namespace) &&
			!db.isOrdered(o.Namespace) && !slices.Contains(nss, o.Namespace) {
			nss = append(nss, o.Namespace)
		}
	}
	if len(nss) == 0 {
		return nil
	}
	args := make([]any, len(nss))
	for i, ns := range nss {
		args[i] = int(ns)
	}
	if err := db.c.SAdd(ctx, db.shortMetaKey(), args...).Err(); err != nil {
		return fmt.Errorf("redisstore: %s: %w", db.shortMetaKey(), db.failed(err))
	}
	for _, ns := range nss {
		db.short[ns/64].Or(1 << (ns % 64))
	}
	return nil
}

// markedShort reports whether this process has added ns to {meta}:short.
func (db *DB) markedShort(ns store.Namespace) bool { return db.short[ns/64].Load()&(1<<(ns%64)) != 0 }

// addCount adds n to the change of namespace ns's count that this process committed
// and has not yet added to its count key: the next transaction's prepare pipeline
// does, or Count, or Close.
func (db *DB) addCount(ns store.Namespace, n int64) {
	db.mu.Lock()
	defer db.mu.Unlock()
	db.counts[ns] += n
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
// adds its committed changes to with its next write (Count adds this process's
// first). So it lags by the last write of each other process, and misses the last
// write of a process that died after it. Two round trips at most.
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
		return 0, db.failed(fmt.Errorf("redisstore: count: %w", err))
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
		return db.failed(fmt.Errorf("redisstore: count: %w", err))
	}
	return nil
}
