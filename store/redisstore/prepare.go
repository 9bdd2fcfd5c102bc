package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// prepReq is one round of one transaction's prepare in a coalesced call (see
// coalesce.go): the writes it places intents for, and what rides with it.
type prepReq struct {
	t       *txn
	pending []int       // the writes to prepare, by index in t.ws
	reads   *recordRead // records to read in the same pipeline, nil for none
	raise   bool        // raise the id counter to t.maxID
	// answers are, for each write pending, its bucket's answer ("OK" and counts, "C",
	// or "L" and the holder); err is set instead when the call failed.
	answers []string
	err     error
}

// fail sets r's error unless it has one.
func (r *prepReq) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("redisstore: prepare: %w", err)
	}
}

// prepEntry is the write r.t.ws[r.pending[j]] in a coalesced prepare.
type prepEntry struct {
	r *prepReq
	j int
}

// sendPrepares sends the prepares of rs in one pipeline: first the process's pending
// resolves (a field a transaction writes may hold one of their intents, which its node
// then resolves before the prepare), then the records rs read, one prepManyScript a
// master carrying every transaction's buckets there, the id counter's raise and the
// counts of earlier writes. Each transaction's buckets pass or fail on their own: one
// transaction's failed condition or lock fails none of the others.
func (db *DB) sendPrepares(rs []*prepReq) {
	ctx := context.Background()
	resolves := db.later.take()
	counts := db.takeCounts()
	var fs []field
	var maxID uint64
	raise := false
	for _, r := range rs {
		r.answers = make([]string, len(r.pending))
		if r.reads != nil {
			fs = append(fs, r.reads.fs...)
		}
		if r.raise {
			maxID, raise = max(maxID, r.t.maxID), true
		}
	}
	var rq *queued
	var ccmds []countCmd
	var reads [][]int
	var calls [][]prepEntry
	var bump *redis.Cmd
	cmds, _ := db.pipelined(ctx, func(p redis.Pipeliner) {
		rq = resolves.queue(ctx, db, p, false)
		if len(fs) > 0 {
			reads = db.queueReads(ctx, p, fs)
		}
		calls = queuePreps(ctx, db, p, rs)
		if raise {
			bump = bumpScript.run(ctx, p, []string{db.counterKey()}, string(binary.BigEndian.AppendUint64(nil, maxID)))
		}
		ccmds = db.queueCounts(ctx, p, counts)
	})
	if rq.done(ctx, db) != nil {
		db.later.put(resolves) // they are idempotent: the next write tries again
	}
	db.keepFailedCounts(ccmds)
	cmds = cmds[len(rq.cmds):]
	if len(fs) > 0 {
		db.answerReads(ctx, rs, fs, reads, cmds)
		cmds = cmds[len(reads):]
	}
	prepAnswers(ctx, db, cmds[:len(calls)], calls)
	if bump != nil && bump.Err() != nil {
		for _, r := range rs {
			if r.raise {
				r.fail(bump.Err())
			}
		}
	}
}

// answerReads gives each request of rs the records it read, fs being theirs one after
// the other, and reads and cmds what queueReads queued for them.
func (db *DB) answerReads(ctx context.Context, rs []*prepReq, fs []field, reads [][]int, cmds []redis.Cmder) {
	out := make([]fieldValue, len(fs))
	err := db.finishReads(ctx, fs, reads, cmds, out)
	at := 0
	for _, r := range rs {
		if r.reads == nil {
			continue
		}
		if err != nil {
			r.fail(fmt.Errorf("read: %w", err))
		}
		at += copy(r.reads.out, out[at:at+len(r.reads.fs)])
	}
}

// queuePreps queues a prepManyScript for each master on p, placing the intents of the
// writes pending of every request, and returns the writes each call carries: a
// request's come one after the other, as the script wants them.
func queuePreps(ctx context.Context, db *DB, p redis.Pipeliner, rs []*prepReq) [][]prepEntry {
	var es []prepEntry
	for _, r := range rs {
		for j := range r.pending {
			es = append(es, prepEntry{r, j})
		}
	}
	key := func(e prepEntry) string { return e.r.t.ws[e.r.pending[e.j]].key }
	groups := db.groupByMaster(ctx, len(es), func(i int) string { return key(es[i]) })
	calls := make([][]prepEntry, len(groups))
	for c, g := range groups {
		var args []any
		var last *prepReq
		nb := 0 // where in args the count of the buckets of last is
		for _, i := range g {
			// g ascends, so the writes of one request follow each other.
			e := es[i]
			calls[c] = append(calls[c], e)
			t := e.r.t
			if e.r != last {
				last, nb = e.r, len(args)+1
				args = append(args, t.id, 0)
			}
			args[nb] = args[nb].(int) + 1
			w := &t.ws[e.r.pending[e.j]]
			args = w.appendPrep(append(args, w.key, w.size()), t.id)
		}
		prepManyScript.run(ctx, p, []string{key(es[g[0]])}, args...)
	}
	return calls
}

// prepAnswers gives each write of calls its answer from queuePreps's commands, cmds,
// preparing again with a prepScript a bucket the writes of a call that failed (a slot
// on the move), in one pipeline: their answers come from their own buckets, which
// follow the cluster's redirects.
func prepAnswers(ctx context.Context, db *DB, cmds []redis.Cmder, calls [][]prepEntry) {
	var again []prepEntry
	for c, es := range calls {
		r, err := cmds[c].(*redis.Cmd).StringSlice()
		if err != nil || len(r) != len(es) {
			again = append(again, es...)
			continue
		}
		for k, e := range es {
			e.r.answers[e.j] = r[k]
		}
	}
	if len(again) == 0 {
		return
	}
	for _, e := range again {
		// The call may have placed some of their intents: an abort drops them.
		e.r.t.placed[e.r.pending[e.j]] = true
	}
	cmds, _ = db.pipelined(ctx, func(p redis.Pipeliner) {
		for _, e := range again {
			w := &e.r.t.ws[e.r.pending[e.j]]
			prepScript.run(ctx, p, w.keys(), w.prepArgs(e.r.t.id)...)
		}
	})
	for k, e := range again {
		a, err := cmds[k].(*redis.Cmd).Text()
		if err != nil {
			e.r.fail(err)
			continue
		}
		e.r.answers[e.j] = a // placedBy checks it
	}
}
