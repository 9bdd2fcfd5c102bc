package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// healthEvery is how old Health's view of the masters' memory may be before it asks
// them again.
var healthEvery = 5 * time.Second

// health is what Health answers: the last check of the masters' memory, or a write
// refused for memory since.
type health struct {
	mu      sync.Mutex
	err     error     // nil, or an error wrapping store.ErrNoSpace
	at      time.Time // of the last check
	polling bool      // a check is under way
}

// Health reports whether the cluster takes writes, as far as this process knows: an
// error wrapping store.ErrNoSpace while a master is at its maxmemory (Redis refuses a
// write there with OOM, under the noeviction policy the store needs), nil otherwise. It
// never waits for Redis: it answers the last check, and starts the next in the
// background once that one is older than a few seconds, so a caller that asks on every
// readiness probe learns of a master freed (maxmemory raised, documents removed) within
// seconds, with no write needed to show it. A write refused for memory counts at once.
func (db *DB) Health() error {
	h := &db.health
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.polling && time.Since(h.at) >= healthEvery {
		h.polling = true
		go db.checkMemory()
	}
	return h.err
}

// checkMemory asks every master for its memory and keeps the answer for Health. A
// check that fails (a master that does not answer) leaves the last answer: that is a
// failover's matter, which each write's error reports.
func (db *DB) checkMemory() {
	h := &db.health
	var err error
	ok := db.gate.Enter()
	if ok {
		ctx, cancel := context.WithTimeout(db.scans, 2*time.Second)
		err = db.memoryFull(ctx)
		cancel()
		db.gate.Leave()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.polling, h.at = false, time.Now()
	if ok && (err == nil || errors.Is(err, store.ErrNoSpace)) {
		h.err = err
	}
}

// memoryFull returns an error wrapping store.ErrNoSpace that names each master whose
// memory, less what Redis does not count against maxmemory (replication and AOF
// buffers), is past its maxmemory: Redis's own test before it refuses a write.
func (db *DB) memoryFull(ctx context.Context) error {
	var mu sync.Mutex
	var full []string
	err := db.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		info, err := n.InfoMap(ctx, "memory").Result()
		if err != nil {
			return err
		}
		num := func(k string) int64 { v, _ := strconv.ParseInt(info["Memory"][k], 10, 64); return v }
		used := num("used_memory") - num("mem_not_counted_for_evict")
		if limit := num("maxmemory"); limit > 0 && used > limit {
			mu.Lock()
			full = append(full, fmt.Sprintf("%s uses %d bytes of its maxmemory %d", n.Options().Addr, used, limit))
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("redisstore: info memory: %w", err)
	}
	if len(full) > 0 {
		slices.Sort(full)
		return fmt.Errorf("%w: redis %s: writes are refused (%s)", store.ErrNoSpace, strings.Join(full, ", "), fullAdvice)
	}
	return nil
}

// fullAdvice is what to do about a full master.
const fullAdvice = "raise maxmemory, add masters, or remove documents"

// noSpace returns err, wrapped in store.ErrNoSpace when it is Redis's refusal of a
// write for memory (OOM), which it also keeps for Health.
func (db *DB) noSpace(err error) error {
	if err == nil || !strings.Contains(err.Error(), "OOM command not allowed") {
		return err
	}
	err = fmt.Errorf("%w: a Redis master is at its maxmemory, and refuses writes (%s): %v", store.ErrNoSpace, fullAdvice, err)
	h := &db.health
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
	return err
}
