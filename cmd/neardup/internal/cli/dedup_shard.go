package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/dedup/redisindex"
	"github.com/neardup/neardup/internal/atomicfile"
)

// shardFile is the file a shard writes into its --out directory, for 'neardup dedup merge'.
const shardFile = "shard.ndshard"

// shardFlags are dedup's flags for one corpus deduplicated by several processes.
type shardFlags struct {
	shard string // "I/N"
	run   string
	redis redisFlags
}

func (f *shardFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&f.shard, "shard", "", "be shard `I/N` of a run spread over N processes: read the inputs k with k mod N = I\nof the full list every shard is given, find duplicates across shards through --redis,\nand write the shard's part into --out for 'neardup dedup merge' (default \"\": one process)")
	fs.StringVar(&f.run, "run", "", "with --shard: the run's `NAME`, the same in every shard and new for every run\n(letters, digits, '-', '_', '.') (default \"\": required with --shard)")
	// serve's Redis flags but --redis-wait, said for a sharded run.
	fs.StringVar(&f.redis.url, "redis", "", "with --shard: the Redis Cluster at `URL` the shards share their index in:\nredis://host:port[,host:port...], rediss:// for TLS (default \"\": required with --shard)")
	f.redis.defineAuth(fs)
	fs.StringVar(&f.redis.prefix, "redis-prefix", "nd", "start every Redis key with `PREFIX` (then the run's name) (default nd)")
}

// parse checks the flags and returns the shard's index and the number of shards.
func (f *shardFlags) parse() (int, int, error) {
	is, ns, ok := strings.Cut(f.shard, "/")
	i, err1 := strconv.Atoi(is)
	n, err2 := strconv.Atoi(ns)
	switch {
	case f.shard == "":
		return 0, 0, usagef("--redis is for a run spread over processes: give --shard I/N and --run NAME too")
	case !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n:
		return 0, 0, usagef("--shard %q: give I/N with 0 <= I < N, such as 0/3", f.shard)
	case f.run == "":
		return 0, 0, usagef("--shard needs --run NAME, the same in every shard of the run and new for every run")
	case f.redis.url == "":
		return 0, 0, usagef("--shard needs --redis URL, the Redis Cluster the shards share")
	}
	return i, n, nil
}

// shardBad is a shard's bad records, kept for the merged bad.jsonl.
type shardBad struct {
	mu   sync.Mutex
	list []dedup.ShardBad
}

func (b *shardBad) Bad(r dedup.BadRecord) error {
	b.mu.Lock()
	b.list = append(b.list, dedup.ShardBad{Source: r.Source, ID: r.ID, Error: r.Err.Error()})
	b.mu.Unlock()
	return nil
}

// runShard is 'neardup dedup --shard I/N': it reads its inputs, finds its pairs through
// the shared index, and writes --out/shard.ndshard.
func (c *dedupCmd) runShard(e *env, args []string, opt dedup.Options, copt corpus.Options) error {
	i, n, err := c.shard.parse()
	if err != nil {
		return err
	}
	if opt.Near == dedup.SimHash {
		return usagef("--method simhash cannot be sharded yet: use all, minhash or exact with --shard")
	}
	for _, a := range args {
		if a == "-" {
			return usagef("--shard reads its inputs by name, each shard its own: standard input (-) cannot be shared")
		}
	}
	path := filepath.Join(c.out, shardFile)
	if _, err := os.Stat(path); err == nil && !c.force {
		return usagef("--out %s already holds a shard: give a new directory, or --force to replace it", filepath.Clean(c.out))
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	ro, err := c.shard.redis.options()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	x, err := redisindex.Open(ctx, redisindex.Options{Addrs: ro.Addrs, Username: ro.Username, Password: ro.Password,
		TLS: ro.TLS, Prefix: ro.Prefix, Run: c.shard.run, Shard: i, Shards: n})
	if err != nil {
		return err
	}
	defer x.Close()
	sink := &shardBad{}
	bad := &badRecords{out: sink, stderr: e.stderr, names: func(s string) string { return s }, fail: c.onError == "fail", path: path}
	copt.OnError = func(b corpus.BadRecord) error { return bad.record(b.Source.String(), "", b.Err) }
	src := newShardSource(args, i, n, copt)
	defer src.close()
	opt.Progress = func(stage string, _ int) {
		if stage == dedup.StageRead {
			src.source()
		}
	}
	sh, err := dedup.RunShard(ctx, src.next, opt, dedup.ShardOptions{Run: c.shard.run, Shard: i, Shards: n, Index: x},
		func(doc neardup.Document, err error) error { return bad.record(src.source(), doc.ID, err) })
	if err != nil {
		return err
	}
	sh.Bad = sink.list
	if err := atomicfile.Write(path, func(w io.Writer) error { _, err := sh.WriteTo(w); return err }); err != nil {
		return err
	}
	if !c.output.quiet {
		st := x.Stats()
		fmt.Fprintf(e.stderr, "neardup dedup: shard %d/%d of run %s: %d documents (%d bad records skipped), %d near pairs found here; %d Redis commands (%.1f a document); wrote %s\n",
			i, n, c.shard.run, len(sh.Docs), len(sink.list), len(sh.Pairs), st.Commands, float64(st.Commands)/float64(max(1, len(sh.Docs))), path)
	}
	return nil
}

// shardSource reads a shard's inputs (those k with k mod n == i) one after the other,
// each opened alone so that a record's position is its input's index and its number in
// that input.
type shardSource struct {
	inputs  []string
	k, n    int
	rec     int
	copt    corpus.Options
	r       *corpus.Reader
	mu      sync.Mutex // the sources of the documents read and not yet reported on
	pending []string
}

func newShardSource(inputs []string, i, n int, copt corpus.Options) *shardSource {
	return &shardSource{inputs: inputs, k: i, n: n, copt: copt}
}

// next is a dedup.PosSource.
func (s *shardSource) next() (neardup.Document, uint64, error) {
	for s.k < len(s.inputs) {
		if s.r == nil {
			r, err := corpus.Open([]string{s.inputs[s.k]}, s.copt)
			if err != nil {
				return neardup.Document{}, 0, err
			}
			s.r, s.rec = r, 0
		}
		rec, err := s.r.Next()
		if errors.Is(err, io.EOF) {
			s.r.Close()
			s.r, s.k = nil, s.k+s.n
			continue
		}
		if err != nil {
			return neardup.Document{}, 0, err
		}
		s.mu.Lock()
		s.pending = append(s.pending, rec.Source.String())
		s.mu.Unlock()
		s.rec++
		return recordDocument(rec), dedup.Position(s.k, s.rec-1), nil
	}
	return neardup.Document{}, 0, io.EOF
}

// source returns, and forgets, the source of the oldest document not reported on:
// dedup.RunShard reports on every document in the order read (onError, else Progress).
func (s *shardSource) source() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	src := s.pending[0]
	s.pending = s.pending[1:]
	return src
}

func (s *shardSource) close() {
	if s.r != nil {
		s.r.Close()
	}
}
