package redisstore

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

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
// costs, without contention, two round trips: one pipelined to every master the batch
// touches (prepare), one to the master of its transaction's status (commit). The third
// step, resolve, rides in the process's next prepare, or goes alone once the process
// has written nothing for a moment; with Options.Wait it is part of the write.
func (db *DB) ApplyIf(b *store.Batch, conds []store.Cond) error {
	_, _, err := db.ApplyIfRead(b, conds, nil)
	return err
}

var _ store.ReadingConditional = (*DB)(nil)

// ApplyIfRead is ApplyIf that reads the records ids in its prepare's pipeline (see
// store.ReadingConditional): they cost the masters one more script call each, and no
// round trip.
func (db *DB) ApplyIfRead(b *store.Batch, conds []store.Cond, ids []uint64) ([][]byte, []bool, error) {
	if !db.gate.Enter() {
		return nil, nil, store.ErrClosed
	}
	defer db.gate.Leave()
	if b.Len() == 0 {
		if len(ids) == 0 {
			return nil, nil, nil
		}
		return db.recordsMany(ids)
	}
	ws, maxID, puts, err := db.plan(b, conds)
	if err != nil {
		return nil, nil, err
	}
	ctx := context.Background()
	if err := db.markShort(ctx, b); err != nil {
		return nil, nil, err // classified by markShort
	}
	if puts {
		// Ids from NextID are below the counter already: no script call to raise it.
		puts = db.ids.seen(maxID)
	}
	var rr *recordRead
	if len(ids) > 0 {
		rr = &recordRead{fs: db.recordFields(ids), out: make([]fieldValue, len(ids))}
	}
	start := time.Now()
	for {
		t := &txn{db: db, id: newTxn(start), ws: ws, placed: make([]bool, len(ws)), maxID: maxID, raise: puts, reads: rr}
		err := t.run(ctx)
		if err == nil && rr != nil {
			return db.visibleRecords(ctx, rr.out)
		}
		if !errors.Is(err, errWounded) {
			return nil, nil, db.failed(err)
		}
		// An older transaction took a key this one held: start again, keeping the
		// start time, so that this one ages and wins in the end.
		time.Sleep(time.Duration(mrand.IntN(2000)) * time.Microsecond)
	}
}

// recordRead is the records an ApplyIfRead reads in its prepare: their fields, and what
// the attempt that committed read.
type recordRead struct {
	fs  []field
	out []fieldValue
}

// txn is one attempt of a transaction.
type txn struct {
	db     *DB
	id     string
	ws     []write
	placed []bool      // ws[i]'s intents are placed, or may be
	maxID  uint64      // the largest record id put
	raise  bool        // the id counter is to be raised to maxID, in the first prepare
	reads  *recordRead // read in the first prepare pipeline, nil for none
	// counts are how many ids the placed intents add to each namespace less how many
	// they take: the process's counts take them once the transaction commits.
	counts map[store.Namespace]int64
}

// run runs the attempt: prepare (place an intent on every field, checking conditions),
// commit (set its status, the one atomic step that decides it), resolve (apply the
// intents and drop them).
func (t *txn) run(ctx context.Context) error {
	db := t.db
	if err := t.prepare(); err != nil {
		return t.abort(ctx, err)
	}
	ok, err := t.commit()
	if err != nil {
		return t.abort(ctx, err)
	}
	if !ok {
		return t.abort(ctx, errWounded)
	}
	db.remember(t.id)
	for ns, n := range t.counts {
		db.addCount(ns, n)
	}
	if db.opt.Wait == 0 {
		db.later.add(t.id, t.ws)
		return nil
	}
	if err := t.resolveWait(ctx); err != nil {
		// Committed: readers apply the intents left, and the next writer of each field
		// resolves them, as long as the status lives.
		return errors.Join(err, db.c.Persist(ctx, db.statusKey(t.id)).Err())
	}
	return nil
}

// commit sets t's status to committed unless another transaction aborted it, and
// reports whether it did; it goes through db.commits, coalesced with other
// transactions' commits and the counts of earlier writes.
func (t *txn) commit() (bool, error) {
	r := &commitReq{status: t.db.statusKey(t.id)}
	t.db.commits.do(r)
	return r.ok, r.err
}

// prepare places the intents of every write, waiting for the older transactions that
// hold some of its fields and wounding the younger ones, until all are placed. Each
// round goes through db.preps, coalesced with other transactions' (coalesce.go); the
// first carries the records t reads and the id counter's raise.
func (t *txn) prepare() error {
	db := t.db
	pending := make([]int, len(t.ws))
	for i := range pending {
		pending[i] = i
	}
	deadline := time.Now().Add(db.opt.LockTimeout + 5*time.Second)
	ctx := context.Background()
	for len(pending) > 0 {
		r := &prepReq{t: t, pending: pending, reads: t.reads, raise: t.raise}
		db.preps.do(r)
		if r.err != nil {
			for _, i := range pending {
				// Some may be placed: an abort drops those, and leaves the rest alone.
				t.placed[i] = true
			}
			return r.err
		}
		t.raise, t.reads = false, nil
		blockers, err := t.placedBy(r.answers, pending)
		if err != nil {
			return err
		}
		if pending = pending[:0]; len(blockers) == 0 {
			break
		}
		for _, is := range blockers {
			pending = append(pending, is...)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redisstore: keys stayed locked for %v by other writers", db.opt.LockTimeout+5*time.Second)
		}
		if err := t.settleAll(ctx, blockers); err != nil {
			return err
		}
	}
	return nil
}

// placedBy reads the prepare answers of the writes pending, marking those placed and
// counting their changes; it returns the writes each other transaction blocks,
// store.ErrConflict when a condition failed, or another error.
func (t *txn) placedBy(answers []string, pending []int) (map[string][]int, error) {
	blockers := map[string][]int{}
	conflict := false
	for j, i := range pending {
		switch a := answers[j]; {
		case a == "OK" || strings.HasPrefix(a, "OK,"):
			if err := t.count(&t.ws[i], a[2:]); err != nil {
				return nil, err
			}
			t.placed[i] = true
		case a == "C":
			conflict = true
		case len(a) == 17 && a[0] == 'L':
			blockers[a[1:]] = append(blockers[a[1:]], i)
		default:
			return nil, fmt.Errorf("redisstore: prepare answered %q", a)
		}
	}
	if conflict {
		return nil, store.ErrConflict
	}
	return blockers, nil
}

// count adds to t.counts the changes of the intents of w, whose prepare answered OK
// followed by deltas, the counts of its markDelta fields, each after a comma.
func (t *txn) count(w *write, deltas string) error {
	ds := strings.Split(deltas, ",")[1:]
	for _, f := range w.fields {
		d, ns := f.delta, f.ns
		if f.cond == markDelta {
			if len(ds) == 0 {
				return fmt.Errorf("redisstore: prepare answered too few counts: OK%s", deltas)
			}
			n, err := strconv.ParseInt(ds[0], 10, 64)
			if err != nil {
				return fmt.Errorf("redisstore: prepare answered count %q", ds[0])
			}
			d, ds = n, ds[1:]
		}
		if d != 0 && ns >= 0 {
			if t.counts == nil {
				t.counts = map[store.Namespace]int64{}
			}
			t.counts[store.Namespace(ns)] += d
		}
	}
	if len(ds) != 0 {
		return fmt.Errorf("redisstore: prepare answered too many counts: OK%s", deltas)
	}
	return nil
}

// settleAll settles every blocker, then returns errWounded if an older transaction
// aborted this one meanwhile, and sleeps a little if some blocker is to be waited for.
func (t *txn) settleAll(ctx context.Context, blockers map[string][]int) error {
	waited := false
	for holder, is := range blockers {
		done, err := t.settle(ctx, holder, is)
		if err != nil {
			return err
		}
		waited = waited || !done
	}
	if s, err := t.db.c.Get(ctx, t.db.statusKey(t.id)).Result(); err == nil && s == "a" {
		return errWounded
	}
	if waited {
		time.Sleep(time.Duration(200+mrand.IntN(800)) * time.Microsecond)
	}
	return nil
}

// settle deals with transaction holder, which holds fields of the writes t.ws[is]: it
// resolves its intents there if it has ended, aborts it if it is younger than t or older
// than LockTimeout, and otherwise reports false: t waits for it.
func (t *txn) settle(ctx context.Context, holder string, is []int) (bool, error) {
	db := t.db
	s, err := db.c.Get(ctx, db.statusKey(holder)).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return false, fmt.Errorf("redisstore: status: %w", err)
	}
	if s == "" {
		if holder < t.id && time.Since(txnStart(holder)) < db.opt.LockTimeout {
			return false, nil
		}
		if _, err := db.c.SetNX(ctx, db.statusKey(holder), "a", time.Hour).Result(); err != nil {
			return false, fmt.Errorf("redisstore: abort: %w", err)
		}
		if s, err = db.c.Get(ctx, db.statusKey(holder)).Result(); err != nil {
			return false, fmt.Errorf("redisstore: status: %w", err)
		}
	}
	r := resolution{txn: holder, commit: s == "c"}
	for _, i := range is {
		r.ws = append(r.ws, t.ws[i])
	}
	if err := (resolutions{r}).run(ctx, db); err != nil {
		return false, err
	}
	return true, nil
}

// abort marks t aborted unless it committed, drops its intents, and returns cause.
func (t *txn) abort(ctx context.Context, cause error) error {
	db := t.db
	if _, err := db.c.SetNX(ctx, db.statusKey(t.id), "a", time.Hour).Result(); err != nil {
		return errors.Join(cause, fmt.Errorf("redisstore: abort: %w", err))
	}
	var r resolution
	r.txn = t.id
	for i, w := range t.ws {
		if t.placed[i] {
			r.ws = append(r.ws, w)
		}
	}
	if len(r.ws) == 0 {
		return cause
	}
	if err := (resolutions{r}).run(ctx, db); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// resolveWait resolves committed t on every master in one pipeline each, followed by a
// WAIT for Options.Wait replicas: WAIT counts the replicas that acknowledged the writes
// made on its own connection, so each master gets its resolves and its WAIT together.
func (t *txn) resolveWait(ctx context.Context) error {
	db := t.db
	byNode := map[*redis.Client][]write{}
	for _, w := range t.ws {
		n, err := db.c.MasterForKey(ctx, w.key)
		if err != nil {
			return fmt.Errorf("redisstore: resolve: %w", err)
		}
		byNode[n] = append(byNode[n], w)
	}
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for n, ws := range byNode {
		wg.Go(func() {
			rs := resolutions{{txn: t.id, commit: true, ws: ws}}
			var rq *queued
			var wait *redis.Cmd
			_, err := n.Pipelined(ctx, func(p redis.Pipeliner) error {
				rq = rs.queue(ctx, db, p, true)
				wait = p.Do(ctx, "wait", db.opt.Wait, db.opt.WaitTimeout.Milliseconds())
				return nil
			})
			if err == nil {
				err = rq.done(ctx, db)
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
	if err := db.c.Expire(ctx, db.statusKey(t.id), statusTTL).Err(); err != nil {
		return fmt.Errorf("redisstore: expire status: %w", err)
	}
	return nil
}
