package redisstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// idBlockSize is how many ids NextID reserves from the cluster's counter at once, and
// idBlockAge how long a process keeps handing them out: a block saves a round trip an
// add, and its age bounds how far behind another process's ids a process's may be.
const (
	idBlockSize = 128
	idBlockAge  = time.Second
)

// idBlock is the ids a process reserved and has not handed out: next to end, excluded.
// Safe for concurrent use.
type idBlock struct {
	mu        sync.Mutex
	next, end uint64
	taken     time.Time
	// counter is the highest value this process saw the store's id counter at, which
	// only rises: a batch whose record ids are all at or below it need not raise it.
	counter uint64
}

// seen drops the block if a record id this process puts is in it or above it, so that
// the next id is above that record, and reports whether the store's counter must be
// raised to id: false when it is there already.
func (b *idBlock) seen(id uint64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if id >= b.next {
		b.next, b.end = 0, 0
	}
	return id > b.counter
}

// NextID hands out the next id of a block of idBlockSize it reserves from the store's
// id counter, which Apply raises to every record id it puts: one round trip a block.
// The ids are above every record id this process put, and above every record id in
// the store when the block was reserved, less than idBlockAge ago: of two processes,
// one may hand out ids below one the other has put meanwhile. Ids stay distinct.
func (db *DB) NextID() (uint64, error) {
	if !db.gate.Enter() {
		return 0, store.ErrClosed
	}
	defer db.gate.Leave()
	b := &db.ids
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next < b.end && time.Since(b.taken) < idBlockAge {
		b.next++
		return b.next - 1, nil
	}
	ctx := context.Background()
	var cmd *redis.Cmd
	_, err := db.pipelined(ctx, func(p redis.Pipeliner) {
		cmd = reserveScript.run(ctx, p, []string{db.counterKey()}, idBlockSize)
	})
	if err != nil {
		if strings.Contains(err.Error(), "NOID") {
			return 0, errNoID
		}
		return 0, db.failed(fmt.Errorf("redisstore: next id: %w", err))
	}
	r, err := cmd.StringSlice()
	if err != nil || len(r) != 2 || len(r[0]) != 8 || len(r[1]) != 8 {
		return 0, fmt.Errorf("redisstore: next id: the counter answered %q, %v", r, err)
	}
	from, to := binary.BigEndian.Uint64([]byte(r[0])), binary.BigEndian.Uint64([]byte(r[1]))
	b.next, b.end, b.taken = from+1, to+1, time.Now()
	b.counter = max(b.counter, to)
	if to == math.MaxUint64 {
		b.end = to // the largest uint64 is no id
	}
	if b.next >= b.end {
		return 0, errNoID
	}
	b.next++
	return b.next - 1, nil
}
