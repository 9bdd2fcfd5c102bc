package redisstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// maxCache bounds DB.committed; past it the cache starts again empty.
const maxCache = 1 << 16

// remember caches txn as committed.
func (db *DB) remember(txn string) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if len(db.committed) >= maxCache {
		clear(db.committed)
	}
	db.committed[txn] = true
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
	db.remember(txn)
	return true, nil
}

// statuses remembers, for the fields one call reads, the status each transaction was
// found in, so that a transaction that commits while the call looks statuses up is
// seen in all of its fields or in none: nil for a call that reads one field.
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

// visibleIDs returns the ids of a posting as committed transactions left it, in
// ascending order.
func (db *DB) visibleIDs(ctx context.Context, fv fieldValue, m statuses) ([]uint64, error) {
	v, _, err := db.visible(ctx, fv, m)
	if err != nil {
		return nil, err
	}
	ids, ok := parseIDs(v)
	if !ok {
		return nil, fmt.Errorf("redisstore: a posting holds %q, not ids", v)
	}
	return ids, nil
}

// visibleRecord returns a record as committed transactions left it.
func (db *DB) visibleRecord(ctx context.Context, fv fieldValue, m statuses) ([]byte, bool, error) {
	v, has, err := db.visible(ctx, fv, m)
	if err != nil || !has {
		return nil, false, err
	}
	rec, ok := unescRecord(v)
	if !ok {
		return nil, false, fmt.Errorf("redisstore: a record holds %q, which the store does not write", v)
	}
	return []byte(rec), true, nil
}

// visible returns a field's value as committed transactions left it.
func (db *DB) visible(ctx context.Context, fv fieldValue, m statuses) (string, bool, error) {
	if fv.txn == "" {
		return fv.v, fv.has, nil
	}
	c, err := m.committed(ctx, db, fv.txn)
	if err != nil {
		return "", false, err
	}
	v, has := fv.state(c)
	return v, has, nil
}

// readFields reads fields of buckets, with their intents, in pipelines of up to 4096
// fields: one round trip to each master, in parallel, with one script a master, which
// carries other readers' fields too when they read at the same time (db.reads,
// coalesce.go); the fields of a call that failed (a slot on the move) are read again
// with an HGET each.
func (db *DB) readFields(fs []field) ([]fieldValue, error) {
	out := make([]fieldValue, len(fs))
	for start := 0; start < len(fs); start += 4096 {
		end := min(start+4096, len(fs))
		r := &readReq{fs: fs[start:end], out: out[start:end]}
		if db.reads.do(r); r.err != nil {
			return nil, fmt.Errorf("redisstore: read: %w", r.err)
		}
	}
	return out, nil
}

// queueReads queues a readManyScript for each master on p, reading fs, and returns the
// indexes in fs each carries.
func (db *DB) queueReads(ctx context.Context, p redis.Pipeliner, fs []field) [][]int {
	groups := db.groupByMaster(ctx, len(fs), func(i int) string { return fs[i].key })
	for _, g := range groups {
		args := make([]any, 0, 2*len(g))
		for _, i := range g {
			args = append(args, fs[i].key, fs[i].name)
		}
		readManyScript.run(ctx, p, []string{fs[g[0]].key}, args...)
	}
	return groups
}

// finishReads reads the answers of queueReads's commands, cmds, into out, reading again
// with an HGET each the fields of a call that failed.
func (db *DB) finishReads(ctx context.Context, fs []field, groups [][]int, cmds []redis.Cmder, out []fieldValue) error {
	var again []int
	for j, g := range groups {
		r, err := cmds[j].(*redis.Cmd).Slice()
		if err != nil || len(r) != len(g) {
			again = append(again, g...)
			continue
		}
		for k, i := range g {
			raw, present := r[k].(string)
			if err := readField(&out[i], raw, present); err != nil {
				return err
			}
		}
	}
	if len(again) == 0 {
		return nil
	}
	cmds, err := db.pipelined(ctx, func(p redis.Pipeliner) {
		for _, i := range again {
			p.HGet(ctx, fs[i].key, fs[i].name)
		}
	})
	if err != nil {
		return err
	}
	for j, i := range again {
		raw, err := cmds[j].(*redis.StringCmd).Result()
		if err := readField(&out[i], raw, err == nil); err != nil {
			return err
		}
	}
	return nil
}

// readField sets *fv to the field whose stored value is raw (present: the field
// exists).
func readField(fv *fieldValue, raw string, present bool) error {
	v, ok := splitField(raw, present)
	if !ok {
		return fmt.Errorf("a field holds %q, which the store does not write", raw)
	}
	*fv = v
	return nil
}

// Record returns the record under id: one round trip, two when a transaction is
// writing it.
func (db *DB) Record(id uint64) ([]byte, bool, error) {
	if !db.gate.Enter() {
		return nil, false, store.ErrClosed
	}
	defer db.gate.Leave()
	recs, oks, err := db.recordsMany([]uint64{id})
	if err != nil {
		return nil, false, err
	}
	return recs[0], oks[0], nil
}

// IDs reads the posting in one round trip (two when a transaction is writing it), then
// calls fn.
func (db *DB) IDs(ns store.Namespace, key []byte, fn func(id uint64) bool) error {
	if !db.gate.Enter() {
		return store.ErrClosed
	}
	defer db.gate.Leave()
	ids, err := db.idsMany([]store.Key{{Namespace: ns, Key: key}})
	if err != nil {
		return err
	}
	for _, id := range ids[0] {
		if !fn(id) {
			break
		}
	}
	return nil
}

var _ store.MultiReader = (*DB)(nil)

// IDsMany reads every posting in one pipeline: one round trip to each master, in
// parallel (and one more for each transaction found writing them and not known to
// have committed). A batch shows in a field only once its status says committed, each
// status looked up once, after every field is read. The masters are read one by one,
// not at one moment: a batch that commits while they are read may show in the fields
// of a master read after its prepare and not in those of one read before it. An add is
// not misled by that, as its prepare is conditioned on every posting it read, and a
// field a batch changed since fails its condition; a check (which writes nothing) may
// answer from such a partial batch.
func (db *DB) IDsMany(keys []store.Key) ([][]uint64, error) {
	if !db.gate.Enter() {
		return nil, store.ErrClosed
	}
	defer db.gate.Leave()
	return db.idsMany(keys)
}

func (db *DB) idsMany(keys []store.Key) ([][]uint64, error) {
	ctx := context.Background()
	fs := make([]field, len(keys))
	for i, k := range keys {
		fs[i].key, fs[i].name = db.postingBucket(k.Namespace, k.Key)
	}
	vs, err := db.readFields(fs)
	if err != nil {
		return nil, db.failed(err)
	}
	out := make([][]uint64, len(keys))
	m := statuses{}
	for i, v := range vs {
		if out[i], err = db.visibleIDs(ctx, v, m); err != nil {
			return nil, db.failed(err)
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
	return db.recordsMany(ids)
}

func (db *DB) recordsMany(ids []uint64) ([][]byte, []bool, error) {
	ctx := context.Background()
	vs, err := db.readFields(db.recordFields(ids))
	if err != nil {
		return nil, nil, db.failed(err)
	}
	return db.visibleRecords(ctx, vs)
}

// recordFields returns the fields of the records ids.
func (db *DB) recordFields(ids []uint64) []field {
	fs := make([]field, len(ids))
	for i, id := range ids {
		fs[i].key, fs[i].name = db.recordBucket(id)
	}
	return fs
}

// visibleRecords returns the records read, vs, as committed transactions left them.
func (db *DB) visibleRecords(ctx context.Context, vs []fieldValue) ([][]byte, []bool, error) {
	recs, oks := make([][]byte, len(vs)), make([]bool, len(vs))
	m := statuses{}
	var err error
	for i, v := range vs {
		if recs[i], oks[i], err = db.visibleRecord(ctx, v, m); err != nil {
			return nil, nil, db.failed(err)
		}
	}
	return recs, oks, nil
}
