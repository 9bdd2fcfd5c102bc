package dedup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// SharedIndex is the index that the shards of one sharded run share (package
// dedup/redisindex keeps it in a Redis Cluster). Each shard holds its own SharedIndex
// value, which knows the run, the shard and the number of shards; a method may be called
// by one goroutine at a time. Positions are global: Position(input, record) of the
// document in the whole corpus, the same in every shard.
type SharedIndex interface {
	// Join records key, the options of the run, or fails with an error wrapping
	// ErrShardMismatch when another shard of the run joined with other options.
	Join(ctx context.Context, key string) error
	// AddMains records the main-text hash of each document at its position: the index
	// keeps, per hash, the smallest position recorded.
	AddMains(ctx context.Context, pos []uint64, mains []neardup.Hash) error
	// Wait records that this shard finished stage and returns once every shard of the
	// run has: a barrier. It waits until ctx is done.
	Wait(ctx context.Context, stage string) error
	// Firsts returns, for each hash, the smallest position recorded for it by any shard.
	Firsts(ctx context.Context, mains []neardup.Hash) ([]uint64, error)
	// AddDocs stores each document under its band keys (for Candidates) and its position
	// (for Docs).
	AddDocs(ctx context.Context, docs []SharedDoc) error
	// Candidates returns, for each list of band keys, the positions of the documents
	// any shard stored under at least one of them, in any order, each once.
	Candidates(ctx context.Context, bands [][]uint64) ([][]uint64, error)
	// Docs returns the documents stored at the positions, Bands left empty, in the
	// order asked; it fails when one is missing.
	Docs(ctx context.Context, pos []uint64) ([]SharedDoc, error)
	// Abort records that this shard failed, with why, so that the other shards' Waits
	// fail instead of waiting for it.
	Abort(ctx context.Context, reason string) error
}

// SharedDoc is a document as a shard stores it in the SharedIndex for the near-duplicate
// search: what the other shards need to make it a candidate and to verify it.
type SharedDoc struct {
	Pos       uint64
	Bands     []uint64 // lsh.AppendBandKeys of Signature
	Signature minhash.Signature
	Set       []uint32 // the shingle set, sorted and distinct (as Run verifies with)
}

// Position is a document's global position in a sharded run: record (counted from 0,
// bad records included) of input (the input's index in the full, ordered list every
// shard is given). Positions order documents as a single Run over the whole list does.
// input must be below 2^20 and record below 2^32, so that a position is exact in a
// float64 (Redis sorted-set scores).
func Position(input, record int) uint64 { return uint64(input)<<32 | uint64(record) }

// maxPosition bounds the positions: below it, a position is exact in a float64.
const maxPosition = 1 << 52

// ShardOptions say which shard of which run RunShard is.
type ShardOptions struct {
	Run    string // the run's name, the same in every shard
	Shard  int    // 0 to Shards-1
	Shards int
	Index  SharedIndex
}

// Shard is what one shard of a sharded run found, for Merge: its documents with their
// global positions and signatures, the near pairs it owns (those whose later document
// it holds) and the records it skipped. Write and ReadShard persist it.
type Shard struct {
	Run          string
	Index, Count int     // this shard's index, and the number of shards
	Options      Options // with defaults; Progress and Threads are not kept
	Docs         []Doc
	Pos          []uint64 // Pos[i] is Docs[i]'s position, ascending
	sigs         []uint32
	Pairs        []ShardPair
	Skipped      int
	Bad          []ShardBad
}

// ShardPair is a verified near pair found by a shard: the positions of its documents,
// A before B, and their exact similarity (Pair.Similarity).
type ShardPair struct {
	A, B       uint64
	Similarity float64
}

// ShardBad is a bad record a shard skipped, kept for the merged bad.jsonl.
type ShardBad struct {
	Source, ID, Error string
}

// PosSource yields the documents of a shard in order with their global positions
// (Position), ascending; it returns io.EOF after the last one.
type PosSource func() (neardup.Document, uint64, error)

// The stages of a sharded run at which every shard waits for the others.
const (
	stageMains = "mains" // every main hash recorded: the exact groups' firsts are known
	stageDocs  = "docs"  // every group first stored: the near search may start
)

// shardBatch is how many documents a shard sends to the SharedIndex at once.
const shardBatch = 512

// RunShard is one shard of a run spread over several processes: it reads and
// fingerprints its documents as Run does, records them in the shared index, waits for
// every shard, and finds the near pairs whose later document it holds among the first
// documents of the exact groups of the whole corpus. Merge joins the shards into the
// Result a single Run over all their documents, in position order, gives. The methods
// All, MinHash and Exact are supported; SimHash fails with ErrOptions. onError is Run's.
// The near search costs, per group first, one index query per band and one fetch per
// candidate.
func RunShard(ctx context.Context, src PosSource, opt Options, so ShardOptions, onError func(neardup.Document, error) error) (*Shard, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := so.check(o); err != nil {
		return nil, err
	}
	key, err := optionsKey(o)
	if err != nil {
		return nil, err
	}
	sh, err := runShard(ctx, src, o, so, key, onError)
	if err != nil {
		// The other shards would wait at a barrier for this one.
		if aerr := so.Index.Abort(context.WithoutCancel(ctx), fmt.Sprintf("shard %d: %v", so.Shard, err)); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return nil, err
	}
	return sh, nil
}

// runShard is RunShard after its checks.
func runShard(ctx context.Context, src PosSource, o Options, so ShardOptions, key string, onError func(neardup.Document, error) error) (*Shard, error) {
	if err := so.Index.Join(ctx, key); err != nil {
		return nil, err
	}
	fpr, err := o.fingerprinter()
	if err != nil {
		return nil, err
	}
	near := nearOf(o.Near) == MinHash
	var st *sets
	if near {
		st = newSets(o.VerifyMemory, o.TempDir, o.Expected)
		defer st.close()
	}
	sh := &Shard{Run: so.Run, Index: so.Shard, Count: so.Shards, Options: o}
	res := &Result{Options: o}
	if err := res.readShard(src, fpr, st, o, sh, onError); err != nil {
		return nil, err
	}
	sh.Docs, sh.sigs, sh.Skipped = res.Docs, res.sigs, res.Skipped
	if near {
		if err := sh.findNear(ctx, so.Index, st); err != nil {
			return nil, err
		}
	}
	return sh, nil
}

func (so ShardOptions) check(o Options) error {
	switch {
	case so.Shards < 1 || so.Shard < 0 || so.Shard >= so.Shards:
		return fmt.Errorf("%w: shard %d of %d: give 0 <= shard < shards", ErrOptions, so.Shard, so.Shards)
	case so.Index == nil:
		return fmt.Errorf("%w: a sharded run needs a SharedIndex", ErrOptions)
	case nearOf(o.Near) == SimHash:
		return fmt.Errorf("%w: method simhash cannot be sharded yet: use all, minhash or exact", ErrOptions)
	}
	return nil
}

// optionsKey is the JSON of the options that decide a run's result, the same in every
// shard of a run; Merge reads the options back from it.
func optionsKey(o Options) (string, error) {
	b, err := json.Marshal(struct {
		Pipeline    neardup.Pipeline
		Containment bool
	}{o.Pipeline, o.Containment})
	if err != nil {
		return "", fmt.Errorf("dedup: the options of a sharded run: %w", err)
	}
	return string(b), nil
}

// readShard is Run's reading stage over a PosSource: it fills r and sh.Pos, matching each
// document fingerprinted to its position by the order Run reports them in.
func (r *Result) readShard(src PosSource, fpr *neardup.Fingerprinter, st *sets, o Options, sh *Shard, onError func(neardup.Document, error) error) error {
	var (
		mu      sync.Mutex // the reader pushes positions while the fingerprinting loop pops them
		pending []uint64
		last    uint64
		started bool
	)
	pop := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		p := pending[0]
		pending = pending[1:]
		return p
	}
	read := func() (neardup.Document, error) {
		doc, pos, err := src()
		if err != nil {
			return doc, err
		}
		if pos >= maxPosition {
			return doc, fmt.Errorf("%w: position %#x: a sharded run takes up to 2^20 inputs of up to 2^32 records", ErrOptions, pos)
		}
		if started && pos <= last {
			return doc, fmt.Errorf("dedup: position %#x after %#x: a shard's positions must ascend", pos, last)
		}
		started, last = true, pos
		mu.Lock()
		pending = append(pending, pos)
		mu.Unlock()
		return doc, nil
	}
	progress := o.Progress
	o.Progress = func(stage string, n int) {
		if stage == StageRead {
			sh.Pos = append(sh.Pos, pop())
		}
		if progress != nil {
			progress(stage, n)
		}
	}
	return r.read(read, fpr, st, o, func(doc neardup.Document, err error) error {
		pop()
		if onError == nil {
			return nil
		}
		return onError(doc, err)
	})
}

// findNear finds the near pairs sh owns, through the shared index: it records the main
// hashes, learns which of its documents are first of their exact group in the whole
// corpus, stores those, and queries them against every shard's.
func (sh *Shard) findNear(ctx context.Context, x SharedIndex, st *sets) error {
	var pos []uint64
	var mains []neardup.Hash
	for i := range sh.Docs {
		if !sh.Docs[i].Main.Empty() {
			pos, mains = append(pos, sh.Pos[i]), append(mains, sh.Docs[i].Main)
		}
	}
	for from := 0; from < len(pos); from += shardBatch {
		to := min(from+shardBatch, len(pos))
		if err := x.AddMains(ctx, pos[from:to], mains[from:to]); err != nil {
			return err
		}
	}
	if err := x.Wait(ctx, stageMains); err != nil {
		return err
	}
	firsts, err := sh.groupFirsts(ctx, x)
	if err != nil {
		return err
	}
	if err := st.finish(); err != nil {
		return err
	}
	o := &sh.Options
	bands, rows := lsh.RecallParams(o.Threshold, missAtThreshold, o.MinHashK)
	var buf []uint32
	for from := 0; from < len(firsts); from += shardBatch {
		docs := make([]SharedDoc, 0, shardBatch)
		for _, i := range firsts[from:min(from+shardBatch, len(firsts))] {
			set, err := st.get(i, &buf)
			if err != nil {
				return err
			}
			sig := sh.signature(i)
			docs = append(docs, SharedDoc{Pos: sh.Pos[i], Bands: lsh.AppendBandKeys(nil, sig, bands, rows),
				Signature: sig, Set: slices.Clone(set)})
		}
		if err := x.AddDocs(ctx, docs); err != nil {
			return err
		}
	}
	if err := x.Wait(ctx, stageDocs); err != nil {
		return err
	}
	for from := 0; from < len(firsts); from += shardBatch {
		if err := sh.query(ctx, x, st, firsts[from:min(from+shardBatch, len(firsts))], bands, rows); err != nil {
			return err
		}
	}
	return nil
}

// groupFirsts returns the indices of sh's documents that are first of their exact group
// in the whole corpus and have words: those the near search compares.
func (sh *Shard) groupFirsts(ctx context.Context, x SharedIndex) ([]int, error) {
	var firsts []int
	for from := 0; from < len(sh.Docs); from += shardBatch {
		to := min(from+shardBatch, len(sh.Docs))
		var idx []int
		var mains []neardup.Hash
		for i := from; i < to; i++ {
			d := &sh.Docs[i]
			switch {
			case d.Words == 0:
			case d.Main.Empty():
				firsts = append(firsts, i) // a group of its own, as in Run
			default:
				idx, mains = append(idx, i), append(mains, d.Main)
			}
		}
		if len(mains) == 0 {
			continue
		}
		got, err := x.Firsts(ctx, mains)
		if err != nil {
			return nil, err
		}
		for j, i := range idx {
			if got[j] == sh.Pos[i] {
				firsts = append(firsts, i)
			}
		}
	}
	slices.Sort(firsts)
	return firsts, nil
}

// query finds the near pairs of the documents qs of sh with the earlier documents of every
// shard, as Run's nearMinHash does with its lsh.Index: a candidate agrees with the query
// on a whole band, and becomes a pair when its estimate is not far below the threshold
// and the exact similarity of the sets reaches it.
func (sh *Shard) query(ctx context.Context, x SharedIndex, st *sets, qs []int, bands, rows int) error {
	o := &sh.Options
	keys := make([][]uint64, len(qs))
	for j, i := range qs {
		keys[j] = lsh.AppendBandKeys(nil, sh.signature(i), bands, rows)
	}
	cands, err := x.Candidates(ctx, keys)
	if err != nil {
		return err
	}
	var need []uint64
	for j, i := range qs {
		for _, p := range cands[j] {
			if p < sh.Pos[i] {
				need = append(need, p)
			}
		}
	}
	slices.Sort(need)
	need = slices.Compact(need)
	docs, err := x.Docs(ctx, need)
	if err != nil {
		return err
	}
	floor := o.estimateFloor()
	var buf []uint32
	for j, i := range qs {
		sig := sh.signature(i)
		var q []uint32
		for _, p := range cands[j] {
			if p >= sh.Pos[i] {
				continue
			}
			k, _ := slices.BinarySearch(need, p)
			c := &docs[k]
			if len(c.Signature) != len(sig) || !lsh.SharesBand(sig, c.Signature, bands, rows) ||
				minhash.Similarity(sig, c.Signature) < floor {
				continue
			}
			if q == nil {
				if q, err = st.get(i, &buf); err != nil {
					return err
				}
			}
			if s := setSimilarity(q, c.Set, o.Containment); s >= o.Threshold {
				sh.Pairs = append(sh.Pairs, ShardPair{A: p, B: sh.Pos[i], Similarity: s})
			}
		}
	}
	return nil
}

// signature is document i's signature.
func (sh *Shard) signature(i int) minhash.Signature {
	return signatureAt(sh.sigs, sh.Options.MinHashK, i)
}
