package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// statusTTL is how long a transaction's status outlives the resolution of all its
// intents: a reader that read an intent before it was resolved looks the status up
// afterwards, within this time (a reader stalled longer sees the batch as not yet
// applied there). Status keys cost memory in proportion to the write rate times this
// time, about 120 bytes each: a minute at 50,000 writes a second is some 360 MB.
const statusTTL = time.Minute

// resolveDelay is how long a committed transaction's resolve waits for the process's
// next prepare to carry it before it goes alone. Until it is resolved, a reader in
// another process pays one more round trip to look its status up.
const resolveDelay = 20 * time.Millisecond

// resolution is the end of transaction txn's intents on the fields of ws: applied when
// commit, dropped otherwise; expire sets its status to expire, once all are resolved.
type resolution struct {
	txn            string
	commit, expire bool
	ws             []write
}

type resolutions []resolution

// queued is what resolutions.queue put in a pipeline: the commands, and for each the
// writes it resolves (none for a status's EXPIRE).
type queued struct {
	cmds   []redis.Cmder
	parts  [][]part
	byText bool
}

// part is write w of resolution r.
type part struct {
	r *resolution
	w *write
}

func (q *queued) add(c redis.Cmder, parts []part) {
	q.cmds, q.parts = append(q.cmds, c), append(q.parts, parts)
}

// queue queues the resolves of rs on p, one resolveManyScript a master, or when byText
// (p is a single node's, which does not run scripts again on NOSCRIPT) one
// resolveScript a bucket by its text; then the expiry of each status whose r.expire.
func (rs resolutions) queue(ctx context.Context, db *DB, p redis.Pipeliner, byText bool) *queued {
	q := &queued{byText: byText}
	var parts []part
	for i := range rs {
		for j := range rs[i].ws {
			parts = append(parts, part{&rs[i], &rs[i].ws[j]})
		}
	}
	if byText {
		for _, pt := range parts {
			q.add(p.Eval(ctx, resolveScript.src, pt.w.keys(), pt.w.resolveArgs(pt.r.txn, pt.r.commit)...), []part{pt})
		}
	} else {
		for _, g := range db.groupByMaster(ctx, len(parts), func(i int) string { return parts[i].w.key }) {
			var args []any
			gp := make([]part, len(g))
			var last *resolution
			nb := 0 // where in args the count of the buckets of last is
			for k, i := range g {
				// g ascends, so the parts of one resolution follow each other.
				pt := parts[i]
				gp[k] = pt
				if pt.r != last {
					last, nb = pt.r, len(args)+2
					args = append(args, pt.r.txn, boolArg(pt.r.commit), 0)
				}
				args[nb] = args[nb].(int) + 1
				args = pt.w.appendNames(append(args, pt.w.key, pt.w.size()))
			}
			q.add(resolveManyScript.run(ctx, p, []string{gp[0].w.key}, args...), gp)
		}
	}
	for _, r := range rs {
		if r.expire {
			q.add(p.Expire(ctx, db.statusKey(r.txn), statusTTL), nil)
		}
	}
	return q
}

// done checks the answers of q's commands, resolves again with a resolveScript a
// bucket the writes of a resolveManyScript that failed, and returns the first error
// left.
func (q *queued) done(ctx context.Context, db *DB) error {
	var first error
	var again []part
	for i, c := range q.cmds {
		if q.parts[i] == nil {
			first = cmp.Or(first, c.Err())
			continue
		}
		n, err := c.(*redis.Cmd).Int64()
		if err == nil && n == int64(fieldsOf(q.parts[i])) {
			continue
		}
		if q.byText {
			first = cmp.Or(first, err, fmt.Errorf("resolve answered %d", n))
			continue
		}
		again = append(again, q.parts[i]...)
	}
	if len(again) == 0 {
		return first
	}
	cmds, _ := db.pipelined(ctx, func(p redis.Pipeliner) {
		for _, pt := range again {
			resolveScript.run(ctx, p, pt.w.keys(), pt.w.resolveArgs(pt.r.txn, pt.r.commit)...)
		}
	})
	for i, c := range cmds {
		n, err := c.(*redis.Cmd).Int64()
		if err == nil && n != int64(fieldsOf(again[i:i+1])) {
			err = fmt.Errorf("resolve answered %d", n)
		}
		first = cmp.Or(first, err)
	}
	return first
}

// fieldsOf returns how many fields the writes of parts have, which a resolve answers.
func fieldsOf(parts []part) int {
	n := 0
	for _, pt := range parts {
		n += len(pt.w.fields)
	}
	return n
}

// run resolves rs in one pipeline.
func (rs resolutions) run(ctx context.Context, db *DB) error {
	var q *queued
	_, _ = db.pipelined(ctx, func(p redis.Pipeliner) { q = rs.queue(ctx, db, p, false) })
	if err := q.done(ctx, db); err != nil {
		return fmt.Errorf("redisstore: resolve: %w", err)
	}
	return nil
}

// laterQueue holds the committed transactions whose resolves wait for the process's
// next prepare (or resolveDelay). Safe for concurrent use.
type laterQueue struct {
	mu    sync.Mutex
	rs    resolutions
	timer *time.Timer
	flush func() // what the timer runs
}

// add queues the resolve of committed transaction txn's writes.
func (q *laterQueue) add(txn string, ws []write) {
	q.put(resolutions{{txn: txn, commit: true, expire: true, ws: ws}})
}

// put queues rs, and arms the timer if it is not armed.
func (q *laterQueue) put(rs resolutions) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.rs = append(q.rs, rs...)
	if q.timer == nil && q.flush != nil {
		q.timer = time.AfterFunc(resolveDelay, q.flush)
	}
}

// take empties the queue and returns what it held.
func (q *laterQueue) take() resolutions {
	q.mu.Lock()
	defer q.mu.Unlock()
	rs := q.rs
	q.rs = nil
	return rs
}

// disarm stops the timer (it may be running) and lets the next put arm it again.
func (q *laterQueue) disarm() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
}

// flushLater is the timer's: it resolves what waits, in one pipeline; what fails waits
// for the next write or timer.
func (db *DB) flushLater() {
	db.later.disarm()
	if !db.gate.Enter() {
		return
	}
	defer db.gate.Leave()
	ctx := context.Background()
	if db.resolveLater(ctx) == nil {
		// The process may stay idle: its counts go now rather than with its next write.
		_ = db.flushCounts(ctx)
	}
}

// resolveLater resolves every transaction waiting in db.later, in one pipeline, and
// puts them back if it fails.
func (db *DB) resolveLater(ctx context.Context) error {
	rs := db.later.take()
	if len(rs) == 0 {
		return nil
	}
	if err := rs.run(ctx, db); err != nil {
		db.later.put(rs)
		return db.failed(err)
	}
	return nil
}

// countCmd is a count key's increment in a pipeline.
type countCmd struct {
	ns  store.Namespace
	n   int64
	cmd *redis.IntCmd
}

// queueCounts queues on p the increments of the count keys by counts (takeCounts's):
// they ride along with a write's pipeline, no round trip of their own.
func (db *DB) queueCounts(ctx context.Context, p redis.Pipeliner, counts map[store.Namespace]int64) []countCmd {
	var ccmds []countCmd
	for ns, n := range counts {
		ccmds = append(ccmds, countCmd{ns, n, p.IncrBy(ctx, db.countKey(ns), n)})
	}
	return ccmds
}

// keepFailedCounts puts back the changes of the increments that failed: the next write
// adds them.
func (db *DB) keepFailedCounts(ccmds []countCmd) {
	for _, c := range ccmds {
		if c.cmd.Err() != nil {
			db.addCount(c.ns, c.n)
		}
	}
}
