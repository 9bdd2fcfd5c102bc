package dedup

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
)

// Merge joins the shards of one sharded run (RunShard) into the Result that a single Run
// over all their documents, in position order, with the same options, gives: the same
// documents, pairs, clusters and kept documents, so that the lists Result writes are
// byte-identical. The shards must be every shard of the run, each once, in any order;
// otherwise Merge fails with ErrShardMissing or ErrShardMismatch. It holds every
// document and signature in memory, as Run does, and costs a pass over the documents per
// shard (the shards' documents are merged by position) plus Run's clustering.
func Merge(shards []*Shard) (*Result, error) {
	start := time.Now()
	o, err := checkShards(shards)
	if err != nil {
		return nil, err
	}
	res := &Result{Options: o}
	var pos []uint64 // of res.Docs
	heads := make([]int, len(shards))
	for {
		best := -1
		for s, sh := range shards {
			if heads[s] < len(sh.Docs) && (best < 0 || sh.Pos[heads[s]] < shards[best].Pos[heads[best]]) {
				best = s
			}
		}
		if best < 0 {
			break
		}
		sh, i := shards[best], heads[best]
		heads[best]++
		if len(pos) > 0 && pos[len(pos)-1] == sh.Pos[i] {
			return nil, fmt.Errorf("%w: position %#x is in two shards; give every shard the same inputs in the same order", ErrShardMismatch, sh.Pos[i])
		}
		pos = append(pos, sh.Pos[i])
		d := sh.Docs[i]
		d.Cluster, d.Kept = -1, true
		res.Docs = append(res.Docs, d)
		res.sigs = append(res.sigs, sh.signature(i)...)
	}
	pairs, _ := exactGroups(res.Docs)
	for _, sh := range shards {
		res.Skipped += sh.Skipped
		for _, p := range sh.Pairs {
			a, aok := slices.BinarySearch(pos, p.A)
			b, bok := slices.BinarySearch(pos, p.B)
			if !aok || !bok {
				return nil, fmt.Errorf("%w: shard %d pairs position %#x with %#x, which no shard holds", ErrShardMismatch, sh.Index, p.A, p.B)
			}
			pairs = append(pairs, Pair{A: a, B: b, Method: MinHash, Similarity: p.Similarity,
				Estimate: minhash.Similarity(res.Signature(b), res.Signature(a))})
		}
	}
	sortPairs(pairs)
	res.lap("merge shards", &start)
	res.cluster(pairs, o.Keep)
	res.lap("cluster", &start)
	return res, nil
}

// checkShards checks that shards are every shard of one run, each once, and returns the
// run's options.
func checkShards(shards []*Shard) (Options, error) {
	if len(shards) == 0 {
		return Options{}, fmt.Errorf("%w: give every shard of the run", ErrShardMissing)
	}
	first := shards[0]
	key, err := optionsKey(first.Options)
	if err != nil {
		return Options{}, err
	}
	seen := make([]bool, first.Count)
	for _, sh := range shards {
		switch k, _ := optionsKey(sh.Options); {
		case sh.Run != first.Run:
			return Options{}, fmt.Errorf("%w: shard %d is of run %q, shard %d of run %q", ErrShardMismatch, first.Index, first.Run, sh.Index, sh.Run)
		case sh.Count != first.Count:
			return Options{}, fmt.Errorf("%w: shard %d is one of %d, shard %d one of %d", ErrShardMismatch, first.Index, first.Count, sh.Index, sh.Count)
		case k != key:
			return Options{}, fmt.Errorf("%w: shards %d and %d were run with different options; run every shard with the same ones", ErrShardMismatch, first.Index, sh.Index)
		case seen[sh.Index]:
			return Options{}, fmt.Errorf("%w: shard %d of run %q is given twice", ErrShardMissing, sh.Index, sh.Run)
		}
		seen[sh.Index] = true
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		return Options{}, fmt.Errorf("%w: shard %s of the %d of run %q not given; run it, or give its output", ErrShardMissing, strings.Join(missing, ", "), first.Count, first.Run)
	}
	o := first.Options
	o.Threads, o.Progress = 0, nil
	return o.withDefaults()
}

// shardMagic starts a shard file; shardVersion is its format's version.
const (
	shardMagic   = "NDSHARD\x00"
	shardVersion = 1
)

// shardFile is the gob payload of a shard file.
type shardFile struct {
	Run          string
	Index, Count int
	Options      string // optionsKey
	Docs         []Doc
	Pos          []uint64
	Sigs         []uint32
	Pairs        []ShardPair
	Skipped      int
	Bad          []ShardBad
}

// WriteTo writes the shard to w as a shard file: a magic, a version, the length and
// CRC-32C of the payload, and the payload (gob). It implements io.WriterTo.
func (sh *Shard) WriteTo(w io.Writer) (int64, error) {
	key, err := optionsKey(sh.Options)
	if err != nil {
		return 0, err
	}
	var payload bytes.Buffer
	err = gob.NewEncoder(&payload).Encode(shardFile{Run: sh.Run, Index: sh.Index, Count: sh.Count, Options: key,
		Docs: sh.Docs, Pos: sh.Pos, Sigs: sh.sigs, Pairs: sh.Pairs, Skipped: sh.Skipped, Bad: sh.Bad})
	if err != nil {
		return 0, fmt.Errorf("dedup: encoding a shard: %w", err)
	}
	head := binary.LittleEndian.AppendUint32([]byte(shardMagic), shardVersion)
	head = binary.LittleEndian.AppendUint64(head, uint64(payload.Len()))
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(payload.Bytes(), crcTable))
	n, err := w.Write(head)
	if err != nil {
		return int64(n), err
	}
	m, err := payload.WriteTo(w)
	return int64(n) + m, err
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ReadShard reads a shard file that Shard.WriteTo wrote. A file that is not one, or is
// damaged or truncated, fails with ErrShardFile.
func ReadShard(r io.Reader) (*Shard, error) {
	head := make([]byte, len(shardMagic)+16)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, fmt.Errorf("%w: its header: %v", ErrShardFile, err)
	}
	if string(head[:len(shardMagic)]) != shardMagic {
		return nil, fmt.Errorf("%w: it does not start with the shard magic", ErrShardFile)
	}
	rest := head[len(shardMagic):]
	if v := binary.LittleEndian.Uint32(rest); v != shardVersion {
		return nil, fmt.Errorf("%w: version %d, this neardup reads %d: run the shard again with this version", ErrShardFile, v, shardVersion)
	}
	size, sum := binary.LittleEndian.Uint64(rest[4:]), binary.LittleEndian.Uint32(rest[12:])
	// Read as it comes, not allocated from the header's length, which may be damaged.
	payload, err := io.ReadAll(io.LimitReader(r, int64(min(size, 1<<62))+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrShardFile, err)
	case uint64(len(payload)) != size:
		return nil, fmt.Errorf("%w: %d bytes of payload where the header says %d (truncated?)", ErrShardFile, len(payload), size)
	case crc32.Checksum(payload, crcTable) != sum:
		return nil, fmt.Errorf("%w: checksum mismatch (damaged)", ErrShardFile)
	}
	var f shardFile
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrShardFile, err)
	}
	return f.shard()
}

// shard checks a decoded shard file and returns its Shard.
func (f *shardFile) shard() (*Shard, error) {
	var ko struct {
		Pipeline    neardup.Pipeline
		Containment bool
	}
	if err := json.Unmarshal([]byte(f.Options), &ko); err != nil {
		return nil, fmt.Errorf("%w: its options: %v", ErrShardFile, err)
	}
	o, err := Options{Pipeline: ko.Pipeline, Containment: ko.Containment}.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w: its options: %v", ErrShardFile, err)
	}
	sh := &Shard{Run: f.Run, Index: f.Index, Count: f.Count, Options: o, Docs: f.Docs, Pos: f.Pos,
		sigs: f.Sigs, Pairs: f.Pairs, Skipped: f.Skipped, Bad: f.Bad}
	k := o.MinHashK
	switch {
	case f.Count < 1 || f.Index < 0 || f.Index >= f.Count:
		return nil, fmt.Errorf("%w: shard %d of %d", ErrShardFile, f.Index, f.Count)
	case len(f.Pos) != len(f.Docs):
		return nil, fmt.Errorf("%w: %d positions for %d documents", ErrShardFile, len(f.Pos), len(f.Docs))
	case len(f.Sigs) != 0 && len(f.Sigs) != k*len(f.Docs):
		return nil, fmt.Errorf("%w: %d signature values for %d documents of %d", ErrShardFile, len(f.Sigs), len(f.Docs), k)
	case f.Skipped < 0:
		return nil, fmt.Errorf("%w: %d skipped", ErrShardFile, f.Skipped)
	}
	for i := 1; i < len(f.Pos); i++ {
		if f.Pos[i] <= f.Pos[i-1] {
			return nil, fmt.Errorf("%w: positions out of order", ErrShardFile)
		}
	}
	for _, p := range f.Pairs {
		if _, ok := slices.BinarySearch(f.Pos, p.B); !ok || p.A >= p.B {
			return nil, fmt.Errorf("%w: a pair (%#x, %#x) the shard does not own", ErrShardFile, p.A, p.B)
		}
	}
	return sh, nil
}
