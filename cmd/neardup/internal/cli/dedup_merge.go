package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/dedup/redisindex"
)

var dedupMergeCommand = &command{
	name:    "dedup merge",
	args:    "--out DIR SHARD...",
	summary: "join the shards of a run spread over processes (dedup --shard) into one result",
	about: `Reads the part every shard of one run wrote ('neardup dedup --shard I/N --out SHARD',
a directory, or its shard.ndshard file), joins their pairs into clusters, and writes into
--out what a single 'neardup dedup' over all the inputs with the same options writes:
clusters.jsonl, pairs.jsonl, keep.txt and drop.txt byte for byte the same, bad.jsonl
(the shards' bad records, shard by shard), summary.json and report.html (without texts).
It writes no corpus/: that needs the inputs.

Every shard of the run must be given, each once, in any order; shards of another run,
with another shard count or other options are refused, and so is a damaged shard file.
The merge needs no Redis: the shards wrote all it needs. With --redis it removes the
run's keys from the cluster once the results are written.
`,
	new: func() runner { return &dedupMergeCmd{} },
}

// dedupMergeCmd is "neardup dedup merge".
type dedupMergeCmd struct {
	out    string
	force  bool
	redis  redisFlags
	output outputFlags
}

func (c *dedupMergeCmd) define(fs *flag.FlagSet) {
	fs.StringVar(&c.out, "out", "", "write the results into `DIR`, new or empty, created if needed (required)")
	fs.BoolVar(&c.force, "force", false, "replace --out DIR and everything in it when it is not empty (default false)")
	fs.StringVar(&c.redis.url, "redis", "", "once the results are written, remove the run's keys from the Redis Cluster at `URL`\n(redis://user:password@host:port,...) (default \"\": leave them)")
	c.redis.defineAuth(fs)
	fs.StringVar(&c.redis.prefix, "redis-prefix", "nd", "the `PREFIX` the shards' keys start with, for --redis (default nd)")
	c.output.define(fs)
}

func (c *dedupMergeCmd) run(e *env, args []string) error {
	switch {
	case len(args) == 0:
		return usagef("give the shards to merge: the --out directories of every 'neardup dedup --shard' of the run")
	case c.out == "":
		return usagef("give --out DIR, where the results go")
	}
	if err := c.output.check(); err != nil {
		return err
	}
	shards := make([]*dedup.Shard, len(args))
	for i, a := range args {
		sh, err := readShardFile(a)
		if err != nil {
			return err
		}
		shards[i] = sh
	}
	res, err := dedup.Merge(shards)
	if err != nil {
		return err
	}
	out, err := dedup.CreateDir(c.out, c.force)
	switch {
	case errors.Is(err, dedup.ErrNotDir):
		return usagef("--out %s is a file, not a directory; give a new or empty directory", filepath.Clean(c.out))
	case errors.Is(err, dedup.ErrDirNotEmpty):
		return usagef("--out %s is not empty: give a new or empty directory, or --force to replace it and all it holds", filepath.Clean(c.out))
	case err != nil:
		return err
	}
	defer out.Abandon()
	for _, sh := range shards {
		for _, b := range sh.Bad {
			if err := out.Bad(dedup.BadRecord{Source: b.Source, ID: b.ID, Err: errors.New(b.Error)}); err != nil {
				return err
			}
		}
	}
	sum, err := out.Write(res, dedup.DirOptions{InputNames: args, Title: "neardup dedup merge: " + strings.Join(args, " ")})
	if err != nil {
		return err
	}
	if c.redis.url != "" {
		if err := c.drop(shards[0]); err != nil {
			return err
		}
	}
	if !c.output.quiet {
		s := sum.Summary
		fmt.Fprintf(e.stderr, "neardup dedup merge: %d shards of run %s: %d documents (%d bad records skipped): %d exact duplicates, %d near pairs, %d clusters; kept %d, dropped %d (%s); results in %s\n",
			len(shards), shards[0].Run, s.Documents, sum.BadRecords+int64(s.Skipped), s.ExactDuplicates, s.NearPairs, s.Clusters, s.Kept, s.Dropped, humanBytes(s.DroppedBytes), c.out)
	}
	if c.output.verbose {
		for _, t := range sum.Timings {
			fmt.Fprintf(e.stderr, "neardup dedup merge: %-34s %8.3f s\n", t["stage"], t["seconds"])
		}
	}
	return nil
}

// drop removes the run's keys from Redis.
func (c *dedupMergeCmd) drop(sh *dedup.Shard) error {
	ro, err := c.redis.options()
	if err != nil {
		return err
	}
	ctx := context.Background()
	x, err := redisindex.Open(ctx, redisindex.Options{Addrs: ro.Addrs, Username: ro.Username, Password: ro.Password,
		TLS: ro.TLS, Prefix: ro.Prefix, Run: sh.Run, Shards: sh.Count})
	if err != nil {
		return fmt.Errorf("the results are in %s, but the run's keys stay: %w", c.out, err)
	}
	defer x.Close()
	if err := x.Drop(ctx); err != nil {
		return fmt.Errorf("the results are in %s, but the run's keys stay: %w", c.out, err)
	}
	return nil
}

// readShardFile reads a shard's file, given as its --out directory or as the file.
func readShardFile(path string) (*dedup.Shard, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, shardFile)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w (give the --out directory of each 'neardup dedup --shard')", path, err)
	}
	defer f.Close()
	sh, err := dedup.ReadShard(f)
	if err != nil {
		return nil, fmt.Errorf("shard %s: %w", path, err)
	}
	return sh, nil
}
