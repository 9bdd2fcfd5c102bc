package redisstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup/store"
)

// orderedPage is how many members of each shard an ordered Postings reads at a time.
const orderedPage = 128

// shardCursor is where an ordered Postings is in one shard: the postings read and not
// yet given to fn, in order, and the last member read.
type shardCursor struct {
	bucket string
	after  string // the last member read; "" before the first page
	buf    []entry
	done   bool // no member after the buffer
}

// entry is one posting, (key, id), as Postings gives them.
type entry struct {
	key string
	id  uint64
}

// compare orders entries as store.Store.Postings does.
func (e entry) compare(o entry) int {
	return cmp.Or(cmp.Compare(len(e.key), len(o.key)), strings.Compare(e.key, o.key), cmp.Compare(e.id, o.id))
}

// orderedPostings is Postings over an ordered namespace: a merge of its shards, each
// read a page at a time (a page of every shard needing one in one round trip, and their
// postings in another), so that a scan that fn stops early reads a few pages of each
// shard, not the whole namespace.
func (db *DB) orderedPostings(ctx context.Context, ns store.Namespace, fn func(key []byte, id uint64) bool) error {
	cs := make([]*shardCursor, orderedShards)
	for i := range cs {
		cs[i] = &shardCursor{bucket: db.orderedBucket(ns, uint64(i))}
	}
	m := statuses{}
	for {
		var empty []*shardCursor
		for _, c := range cs {
			if len(c.buf) == 0 && !c.done {
				empty = append(empty, c)
			}
		}
		if err := db.fillShards(ctx, empty, m); err != nil {
			return db.failed(err)
		}
		if more := emit(cs, fn); !more {
			return nil
		}
	}
}

// emit gives fn the smallest entry of all shards while every shard has one buffered or
// has no more (then it is the smallest left in the namespace). It returns true when a
// shard needs its next page, false when fn stopped or every shard is done.
func emit(cs []*shardCursor, fn func(key []byte, id uint64) bool) bool {
	for {
		var low *shardCursor
		for _, c := range cs {
			switch {
			case len(c.buf) == 0 && !c.done:
				return true
			case len(c.buf) == 0:
			case low == nil || c.buf[0].compare(low.buf[0]) < 0:
				low = c
			}
		}
		if low == nil {
			return false
		}
		e := low.buf[0]
		low.buf = low.buf[1:]
		if !fn([]byte(e.key), e.id) {
			return false
		}
	}
}

// fillShards reads the next page of members of each cursor, then the postings they
// name, as committed transactions left them.
func (db *DB) fillShards(ctx context.Context, cs []*shardCursor, m statuses) error {
	if len(cs) == 0 {
		return nil
	}
	cmds, err := db.pipelined(ctx, func(p redis.Pipeliner) {
		for _, c := range cs {
			start := "-"
			if c.after != "" {
				start = "(" + c.after
			}
			p.ZRangeArgs(ctx, redis.ZRangeArgs{Key: indexKey(c.bucket), Start: start, Stop: "+", ByLex: true, Count: orderedPage})
		}
	})
	if err != nil {
		return fmt.Errorf("redisstore: ordered read: %w", err)
	}
	var fs []field
	var owner []*shardCursor
	for i, c := range cs {
		members := cmds[i].(*redis.StringSliceCmd).Val()
		c.done = len(members) < orderedPage
		for _, mb := range members {
			if len(mb) < 4 || int(binary.BigEndian.Uint32([]byte(mb))) != len(mb)-4 {
				return fmt.Errorf("redisstore: ordered bucket %s holds member %q", c.bucket, mb)
			}
			fs = append(fs, field{c.bucket, mb[4:]})
			owner = append(owner, c)
			c.after = mb
		}
	}
	vs, err := db.readFields(fs)
	if err != nil {
		return err
	}
	for i, v := range vs {
		ids, err := db.visibleIDs(ctx, v, m)
		if err != nil {
			return err
		}
		for _, id := range ids {
			owner[i].buf = append(owner[i].buf, entry{fs[i].name, id})
		}
	}
	return nil
}
