package redisstore

import (
	"context"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Concurrent transactions' calls, coalesced. Each script call costs a master far more
// than the hash commands in it (turning arguments and answers between Lua and Redis, a
// pipeline's reads and writes on its socket), and each pipeline costs the client as
// much again; with many adds in flight, most are in the same phase at once. So each
// phase (the reads of postings and records, the prepare, the commit) goes through a
// coalescer: one call of the phase in flight at a time, and the requests that arrive
// meanwhile wait and go together as the next, one script call a master carrying every
// request's buckets and one pipeline for all. That is group commit: a lone request goes
// at once, so nothing waits on a timer at low load, and under load the calls a request
// grow fewer as the requests a call grow more.

// coalescer sends the requests of one phase, one call in flight at a time, the requests
// that arrive meanwhile together as the next call. send answers every request it is
// given before it returns. Safe for concurrent use.
type coalescer[R any] struct {
	send  func([]R)
	mu    sync.Mutex
	busy  bool
	queue []R
	dones []chan struct{}
}

// do sends r, alone when no call is in flight and with the others that gathered
// meanwhile when one is, and returns once send has answered it.
func (c *coalescer[R]) do(r R) {
	c.mu.Lock()
	if c.busy {
		done := make(chan struct{})
		c.queue, c.dones = append(c.queue, r), append(c.dones, done)
		c.mu.Unlock()
		<-done
		return
	}
	c.busy = true
	c.mu.Unlock()
	c.send([]R{r})
	c.next()
}

// next sends what gathered while the last call was in flight, from a goroutine of its
// own so that the caller of the last call returns at once, or marks the coalescer idle.
func (c *coalescer[R]) next() {
	c.mu.Lock()
	rs, dones := c.queue, c.dones
	c.queue, c.dones = nil, nil
	c.busy = len(rs) > 0
	c.mu.Unlock()
	if len(rs) == 0 {
		return
	}
	go func() {
		c.send(rs)
		for _, d := range dones {
			close(d)
		}
		c.next()
	}()
}

// readReq is one reader's fields in a coalesced read: fs in, out and err out.
type readReq struct {
	fs  []field
	out []fieldValue
	err error
}

// sendReads reads the fields of rs in one pipeline, one readManyScript a master for
// them all: each field is read at one moment with the others of its master, as a
// request alone would read it.
func (db *DB) sendReads(rs []*readReq) {
	ctx := context.Background()
	fs, out := rs[0].fs, rs[0].out
	if len(rs) > 1 {
		fs = nil
		for _, r := range rs {
			fs = append(fs, r.fs...)
		}
		out = make([]fieldValue, len(fs))
	}
	var groups [][]int
	cmds, _ := db.pipelined(ctx, func(p redis.Pipeliner) { groups = db.queueReads(ctx, p, fs) })
	err := db.finishReads(ctx, fs, groups, cmds, out)
	at := 0
	for _, r := range rs {
		r.err = err
		if len(rs) > 1 {
			copy(r.out, out[at:at+len(r.fs)])
			at += len(r.fs)
		}
	}
}

// commitReq is one transaction's commit in a coalesced call: the SET NX of its status,
// and whether it won.
type commitReq struct {
	status string
	ok     bool
	err    error
}

// sendCommits sets the statuses of rs to committed unless another transaction aborted
// them first, in one pipeline, with the counts of earlier writes.
func (db *DB) sendCommits(rs []*commitReq) {
	ctx := context.Background()
	sets := make([]*redis.BoolCmd, len(rs))
	var ccmds []countCmd
	counts := db.takeCounts()
	_, err := db.pipelined(ctx, func(p redis.Pipeliner) {
		for i, r := range rs {
			sets[i] = p.SetNX(ctx, r.status, "c", 0)
		}
		ccmds = db.queueCounts(ctx, p, counts)
	})
	db.keepFailedCounts(ccmds)
	if err != nil {
		_ = db.reloadOn(err)
	}
	for i, r := range rs {
		r.ok, r.err = sets[i].Val(), sets[i].Err()
		if r.err != nil {
			r.err = fmt.Errorf("redisstore: commit: %w", r.err)
		}
	}
}
