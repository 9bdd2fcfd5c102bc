package dedup

import "errors"

var (
	// ErrOptions reports an Options field out of range; the message says which and what to use.
	ErrOptions = errors.New("dedup: invalid options")
	// ErrNotDir reports an output path that is a file: give a new or empty directory.
	ErrNotDir = errors.New("dedup: the output path is a file, not a directory")
	// ErrDirNotEmpty reports an output directory that holds files, which only a forced
	// write replaces: give a new or empty directory, or force.
	ErrDirNotEmpty = errors.New("dedup: the output directory is not empty")
	// ErrShardMismatch reports shards that are not of one run: another run name, number
	// of shards or options. Give every shard of a run the same --run, shard count and
	// options.
	ErrShardMismatch = errors.New("dedup: the shards are not of one run")
	// ErrShardMissing reports a merge without every shard of the run, or with one twice.
	ErrShardMissing = errors.New("dedup: a shard is missing")
	// ErrShardFile reports a shard file that is not one, or is damaged: write it again
	// by running its shard again.
	ErrShardFile = errors.New("dedup: not a valid shard file")
)
