// Package redisindex keeps the index that the shards of a sharded dedup run share
// (dedup.SharedIndex) in a Redis Cluster, so that several processes, each reading a slice
// of a corpus, find the duplicates across slices.
//
// Every key starts with the prefix and the run's name, so that runs do not mix:
//
//	P:R:o            the run's options and shard count (SET NX; a shard with others fails)
//	P:R:w:STAGE      the shards that finished STAGE (a set: the barrier)
//	P:R:x            why a shard failed, which ends the others' waits
//	P:R:m:HASH       a sorted set holding the smallest position of a main-text hash (ZADD LT)
//	P:R:b:KEY        the positions of the documents with LSH band key KEY (a set of integers)
//	P:R:d:POS        a document's signature and shingle set
//
// Commands are plain and pipelined: a batch run needs no transactions, since every write
// is idempotent (a set member, a minimum) and the barriers order the stages. A shard
// that runs again after a crash writes the same values again.
//
// # Caveats
//
// The cluster must not evict keys (maxmemory-policy noeviction, the default): a main hash
// or band key evicted during a run silently loses duplicates. The keys are not removed
// at the end of a run: Drop removes them, once the merge has
// read every shard. A run name used again finds the previous run's keys, and its barriers
// already passed: give every run a new name, or Drop the old one first. A barrier waits
// for every shard for as long as its context allows: a shard that never comes blocks the
// others.
package redisindex

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
)

// Options say where the index is and which shard of which run opens it.
type Options struct {
	// Addrs are host:port addresses of some of the cluster's nodes; at least one.
	Addrs []string
	// Username and Password authenticate (Redis ACL); empty for none.
	Username, Password string
	// TLS, if not nil, connects with TLS.
	TLS *tls.Config
	// Prefix starts every key; "nd" when empty.
	Prefix string
	// Run names the run: letters, digits, '-', '_' and '.'.
	Run string
	// Shard is this shard's index, 0 to Shards-1.
	Shard, Shards int
	// Poll is how often a barrier asks whether the other shards are done; 200 ms when 0.
	Poll time.Duration
}

// Index is a dedup.SharedIndex in a Redis Cluster. Its methods may be called by one
// goroutine at a time; Close releases its connections.
type Index struct {
	c     *redis.ClusterClient
	keys  string // "P:R:"
	opt   Options
	stats Stats
}

// Stats counts the commands an Index sent and the bytes of the values it wrote and read.
type Stats struct {
	Commands     int64
	BytesWritten int64
	BytesRead    int64
}

var _ dedup.SharedIndex = (*Index)(nil)

var (
	// ErrOptions reports an Options field out of range; the message says what to use.
	ErrOptions = errors.New("redisindex: invalid options")
	// ErrAborted reports a run that another shard ended by failing (Abort); the message
	// says which and why. Fix that, and run every shard again under a new run name.
	ErrAborted = errors.New("redisindex: another shard failed")
)

// Open connects to the cluster and checks that every master answers. It fails with a
// message naming the addresses when the cluster cannot be reached.
func Open(ctx context.Context, opt Options) (*Index, error) {
	if opt.Prefix == "" {
		opt.Prefix = "nd"
	}
	if opt.Poll <= 0 {
		opt.Poll = 200 * time.Millisecond
	}
	switch {
	case len(opt.Addrs) == 0:
		return nil, fmt.Errorf("%w: no address: give at least one host:port of the cluster", ErrOptions)
	case !validName(opt.Prefix):
		return nil, fmt.Errorf("%w: prefix %q: use letters, digits, '-', '_' and '.'", ErrOptions, opt.Prefix)
	case !validName(opt.Run):
		return nil, fmt.Errorf("%w: run %q: name the run with letters, digits, '-', '_' and '.'", ErrOptions, opt.Run)
	case opt.Shards < 1 || opt.Shard < 0 || opt.Shard >= opt.Shards:
		return nil, fmt.Errorf("%w: shard %d of %d: give 0 <= shard < shards", ErrOptions, opt.Shard, opt.Shards)
	}
	c := redis.NewClusterClient(&redis.ClusterOptions{
		// A copy: the client appends the nodes it learns of to the slice it is given.
		Addrs: slices.Clone(opt.Addrs), Username: opt.Username, Password: opt.Password, TLSConfig: opt.TLS, MaxRedirects: 8,
	})
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.ForEachMaster(pctx, func(ctx context.Context, n *redis.Client) error { return n.Ping(ctx).Err() }); err != nil {
		c.Close()
		return nil, fmt.Errorf("redisindex: cannot reach the Redis Cluster at %s (check --redis and that the cluster is up): %w", strings.Join(opt.Addrs, ","), err)
	}
	return &Index{c: c, keys: opt.Prefix + ":" + opt.Run + ":", opt: opt}, nil
}

func validName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return false
		}
	}
	return s != ""
}

// Close closes the connections.
func (x *Index) Close() error { return x.c.Close() }

// Stats returns what the Index has sent and read so far.
func (x *Index) Stats() Stats { return x.stats }

// Join implements dedup.SharedIndex.
func (x *Index) Join(ctx context.Context, key string) error {
	want := strconv.Itoa(x.opt.Shards) + " shards " + key
	x.stats.Commands++
	ok, err := x.c.SetNX(ctx, x.keys+"o", want, 0).Result()
	if err != nil {
		return x.fail("join", err)
	}
	if ok {
		return nil
	}
	x.stats.Commands++
	got, err := x.c.Get(ctx, x.keys+"o").Result()
	if err != nil {
		return x.fail("join", err)
	}
	if got != want {
		n, _, _ := strings.Cut(got, " ")
		return fmt.Errorf("%w: run %q was started with %s shards and other options than this shard's (%d shards); give every shard the same options, or name a new run",
			dedup.ErrShardMismatch, x.opt.Run, n, x.opt.Shards)
	}
	return nil
}

// AddMains implements dedup.SharedIndex.
func (x *Index) AddMains(ctx context.Context, pos []uint64, mains []neardup.Hash) error {
	_, err := x.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range mains {
			p.ZAddLT(ctx, x.mainKey(m), redis.Z{Score: float64(pos[i]), Member: "f"})
		}
		return nil
	})
	x.stats.Commands += int64(len(mains))
	return x.fail("recording main hashes", err)
}

func (x *Index) mainKey(m neardup.Hash) string { return x.keys + "m:" + hex.EncodeToString(m[:]) }

// Wait implements dedup.SharedIndex.
func (x *Index) Wait(ctx context.Context, stage string) error {
	key := x.keys + "w:" + stage
	x.stats.Commands++
	if err := x.c.SAdd(ctx, key, x.opt.Shard).Err(); err != nil {
		return x.fail("barrier "+stage, err)
	}
	for {
		x.stats.Commands += 2
		n, err := x.c.SCard(ctx, key).Result()
		if err != nil {
			return x.fail("barrier "+stage, err)
		}
		if n >= int64(x.opt.Shards) {
			return nil
		}
		why, err := x.c.Get(ctx, x.keys+"x").Result()
		switch {
		case err == nil:
			return fmt.Errorf("%w: run %q: %s", ErrAborted, x.opt.Run, why)
		case !errors.Is(err, redis.Nil):
			return x.fail("barrier "+stage, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("redisindex: waiting at %q for the other shards of run %q (%d of %d done): %w", stage, x.opt.Run, n, x.opt.Shards, ctx.Err())
		case <-time.After(x.opt.Poll):
		}
	}
}

// Abort implements dedup.SharedIndex. The first reason given stays.
func (x *Index) Abort(ctx context.Context, reason string) error {
	x.stats.Commands++
	return x.fail("recording a failure", x.c.SetNX(ctx, x.keys+"x", reason, 0).Err())
}

// Firsts implements dedup.SharedIndex.
func (x *Index) Firsts(ctx context.Context, mains []neardup.Hash) ([]uint64, error) {
	cmds := make([]*redis.FloatCmd, len(mains))
	_, err := x.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range mains {
			cmds[i] = p.ZScore(ctx, x.mainKey(m), "f")
		}
		return nil
	})
	x.stats.Commands += int64(len(mains))
	if err != nil {
		return nil, x.fail("reading exact groups", err)
	}
	out := make([]uint64, len(mains))
	for i, c := range cmds {
		out[i] = uint64(c.Val())
	}
	return out, nil
}

// AddDocs implements dedup.SharedIndex.
func (x *Index) AddDocs(ctx context.Context, docs []dedup.SharedDoc) error {
	_, err := x.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range docs {
			d := &docs[i]
			v := encodeDoc(nil, d)
			x.stats.BytesWritten += int64(len(v))
			p.Set(ctx, x.docKey(d.Pos), v, 0)
			for _, b := range d.Bands {
				p.SAdd(ctx, x.bandKey(b), d.Pos)
			}
			x.stats.Commands += int64(1 + len(d.Bands))
		}
		return nil
	})
	return x.fail("storing documents", err)
}

func (x *Index) docKey(pos uint64) string { return x.keys + "d:" + strconv.FormatUint(pos, 16) }
func (x *Index) bandKey(b uint64) string  { return x.keys + "b:" + strconv.FormatUint(b, 16) }

// Candidates implements dedup.SharedIndex.
func (x *Index) Candidates(ctx context.Context, bands [][]uint64) ([][]uint64, error) {
	cmds := make([][]*redis.StringSliceCmd, len(bands))
	_, err := x.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, keys := range bands {
			for _, b := range keys {
				cmds[i] = append(cmds[i], p.SMembers(ctx, x.bandKey(b)))
			}
			x.stats.Commands += int64(len(keys))
		}
		return nil
	})
	if err != nil {
		return nil, x.fail("querying band keys", err)
	}
	out := make([][]uint64, len(bands))
	for i, cs := range cmds {
		seen := map[uint64]bool{}
		for _, c := range cs {
			for _, s := range c.Val() {
				p, err := strconv.ParseUint(s, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("redisindex: a band key holds %q, not a position: was it written by another program?", s)
				}
				if !seen[p] {
					seen[p] = true
					out[i] = append(out[i], p)
				}
			}
		}
	}
	return out, nil
}

// Docs implements dedup.SharedIndex.
func (x *Index) Docs(ctx context.Context, pos []uint64) ([]dedup.SharedDoc, error) {
	cmds := make([]*redis.StringCmd, len(pos))
	_, err := x.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, q := range pos {
			cmds[i] = p.Get(ctx, x.docKey(q))
		}
		return nil
	})
	x.stats.Commands += int64(len(pos))
	if err != nil {
		return nil, x.fail("reading documents", err)
	}
	out := make([]dedup.SharedDoc, len(pos))
	for i, c := range cmds {
		v := c.Val()
		x.stats.BytesRead += int64(len(v))
		d, err := decodeDoc([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("redisindex: document %#x: %w", pos[i], err)
		}
		d.Pos = pos[i]
		out[i] = d
	}
	return out, nil
}

// Drop removes every key of the run from every master. Call it once no shard and no
// merge needs the run any more. It scans the whole key space of each master.
func (x *Index) Drop(ctx context.Context) error {
	err := x.c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		it := n.Scan(ctx, 0, x.keys+"*", 1000).Iterator()
		var batch []string
		for it.Next(ctx) {
			if batch = append(batch, it.Val()); len(batch) == 1000 {
				if err := unlink(ctx, n, batch); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		return unlink(ctx, n, batch)
	})
	return x.fail("dropping the run's keys", err)
}

// unlink removes keys from one node, one command each: they lie in different slots.
func unlink(ctx context.Context, n *redis.Client, keys []string) error {
	_, err := n.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, k)
		}
		return nil
	})
	return err
}

// fail wraps a Redis error with what was being done; nil stays nil.
func (x *Index) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("redisindex: %s in run %q at %s: %w", what, x.opt.Run, strings.Join(x.opt.Addrs, ","), err)
}

// encodeDoc appends d's value: the signature's length and values (uint32 each,
// little-endian), then the set's length and its values as uvarint gaps.
func encodeDoc(dst []byte, d *dedup.SharedDoc) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(d.Signature)))
	for _, v := range d.Signature {
		dst = binary.LittleEndian.AppendUint32(dst, v)
	}
	dst = binary.AppendUvarint(dst, uint64(len(d.Set)))
	var prev uint32
	for _, v := range d.Set {
		dst = binary.AppendUvarint(dst, uint64(v-prev))
		prev = v
	}
	return dst
}

// errValue reports a stored document that does not decode.
var errValue = errors.New("not a stored document (damaged, or written by another program)")

// decodeDoc reads what encodeDoc wrote; a set that does not ascend strictly is damaged.
func decodeDoc(b []byte) (dedup.SharedDoc, error) {
	var d dedup.SharedDoc
	k, n := binary.Uvarint(b)
	if n <= 0 || k > uint64(len(b)-n)/4 {
		return d, errValue
	}
	b = b[n:]
	d.Signature = make([]uint32, k)
	for i := range d.Signature {
		d.Signature[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	b = b[4*k:]
	m, n := binary.Uvarint(b)
	if n <= 0 || m > uint64(len(b)-n) {
		return d, errValue
	}
	b = b[n:]
	d.Set = make([]uint32, 0, m)
	var prev uint64
	for i := range m {
		g, n := binary.Uvarint(b)
		if n <= 0 || (i > 0 && g == 0) || prev+g > 1<<32-1 {
			return d, errValue
		}
		prev += g
		d.Set = append(d.Set, uint32(prev))
		b = b[n:]
	}
	if len(b) != 0 {
		return d, errValue
	}
	return d, nil
}
