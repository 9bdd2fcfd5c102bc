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

// queue queues the resolve scripts of rs on p (by their text when byText: p is a single
// node's, which does not run them again on NOSCRIPT), and the expiry of
// its status if r.expire, and returns the commands in order.
func (rs resolutions) queue(ctx context.Context, db *DB, p redis.Pipeliner, byText bool) []redis.Cmder {
	var cmds []redis.Cmder
	for _, r := range rs {
		for _, w := range r.ws {
			keys, args := w.keys(), w.resolveArgs(r.txn, r.commit)
			if byText {
				cmds = append(cmds, p.Eval(ctx, resolveScript.src, keys, args...))
			} else {
				cmds = append(cmds, resolveScript.run(ctx, p, keys, args...))
			}
		}
		if r.expire {
			cmds = append(cmds, p.Expire(ctx, db.statusKey(r.txn), statusTTL))
		}
	}
	return cmds
}

// done adds the answers of queue's commands to the process's counts, and returns the
// first error among them.
func (rs resolutions) done(db *DB, cmds []redis.Cmder) error {
	i := 0
	var first error
	for _, r := range rs {
		for _, w := range r.ws {
			c := cmds[i].(*redis.Cmd)
			i++
			deltas, err := c.Int64Slice()
			if err != nil {
				first = cmp.Or(first, err)
				continue
			}
			for j, d := range deltas {
				if d != 0 && j < len(w.ns) && w.ns[j] >= 0 {
					db.addCount(store.Namespace(w.ns[j]), d)
				}
			}
		}
		if r.expire {
			first = cmp.Or(first, cmds[i].Err())
			i++
		}
	}
	return first
}

// run resolves rs in one pipeline.
func (rs resolutions) run(ctx context.Context, db *DB) error {
	var cmds []redis.Cmder
	_, _ = db.pipelined(ctx, func(p redis.Pipeliner) { cmds = rs.queue(ctx, db, p, false) })
	if err := rs.done(db, cmds); err != nil {
		return fmt.Errorf("redisstore: resolve: %w", err)
	}
	return nil
}

// laterQueue holds the committed transactions whose resolves wait for the process's
// next prepare (or resolveDelay). Safe for concurrent use.
type laterQueue struct {
	// running is held by resolveLater while it resolves what it took, so that Count,
	// which resolves first, does not count before a timer's resolve it overlapped.
	running sync.Mutex
	mu      sync.Mutex
	rs      resolutions
	timer   *time.Timer
	flush   func() // what the timer runs
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
	db.later.running.Lock()
	defer db.later.running.Unlock()
	rs := db.later.take()
	if len(rs) == 0 {
		return nil
	}
	if err := rs.run(ctx, db); err != nil {
		db.later.put(rs)
		return db.reloadOn(err)
	}
	return nil
}

// countCmd is a count key's increment in a pipeline.
type countCmd struct {
	ns  store.Namespace
	n   int64
	cmd *redis.IntCmd
}
