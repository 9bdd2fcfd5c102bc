package dedup

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/neardup/neardup/lsh"
	"github.com/neardup/neardup/minhash"
)

// missAtThreshold is the chance that the banding never makes a candidate of a pair whose
// similarity is exactly the threshold (lsh.RecallParams); pairs above it are missed less
// often. Candidates below the threshold are verified away, so recall is bought with
// candidates: at 0.8 and K = 128 it gives 18 bands of 5 rows.
const missAtThreshold = 0.001

// estimateSigmas is how far below the threshold, in standard errors of a K-value estimate
// at the threshold, a candidate's MinHash estimate must fall to be rejected without its
// set being read. A pair at or above the threshold falls that far about once in 10^9.
const estimateSigmas = 6

// DefaultVerifyMemory is the bytes of shingle sets a Run keeps in memory before it
// spills the rest to a temporary file (Options.VerifyMemory).
const DefaultVerifyMemory = 256 << 20

// sets keeps every document's shingle set for exact verification: the low 32 bits of its
// feature hashes (minhash.Jaccard says what the 32 bits cost). The first sets stay in
// memory, up to a budget; the rest go to a temporary file, appended in input order while
// the documents are read, and are read back by position when a candidate pair needs
// them. A set is stored as the features came, and sorted (minhash.SortUnique) only when
// a pair first needs it: most documents are never a candidate, and sorting them all
// would cost a quarter of the fingerprinting. It is used by one goroutine at a time.
type sets struct {
	off    []int64  // document i's features are values off[i] to off[i+1]
	mem    []uint32 // values 0 to len(mem); once a set spills, mem stops growing
	sorted []uint64 // bit i: document i's features in mem are sorted, see get
	limit  int      // values mem may hold
	dir    string   // of the temporary file; "" means os.TempDir()
	f      *os.File // values len(mem) onward, little-endian, nil until a set spills
	w      *bufio.Writer
	buf    []byte
}

// newSets returns an empty store that keeps up to memory bytes of sets in memory (none
// when memory is negative) and spills the rest to a file in dir.
func newSets(memory int64, dir string, expected int) *sets {
	s := &sets{off: make([]int64, 1, expected+1), dir: dir}
	if memory > 0 {
		s.limit = int(min(memory/4, math.MaxInt32))
	}
	return s
}

// add appends the next document's features.
func (s *sets) add(set []uint32) error {
	end := s.off[len(s.off)-1] + int64(len(set))
	if s.f == nil && int(end) <= s.limit {
		s.mem = append(s.mem, set...)
		s.off = append(s.off, end)
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, "neardup-sets-*")
		if err != nil {
			return fmt.Errorf("dedup: spilling shingle sets for verification (set Options.TempDir or VerifyMemory): %w", err)
		}
		s.f, s.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	s.buf = s.buf[:0]
	for _, v := range set {
		s.buf = binary.LittleEndian.AppendUint32(s.buf, v)
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("dedup: writing shingle sets to %s: %w", s.f.Name(), err)
	}
	s.off = append(s.off, end)
	return nil
}

// finish flushes what add wrote; get may be called after it.
func (s *sets) finish() error {
	if s.w == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("dedup: writing shingle sets to %s: %w", s.f.Name(), err)
	}
	return nil
}

// get returns document i's set, sorted and distinct: a slice of the store's memory, or
// *buf (grown as needed) filled from the file. The caller does not change it.
func (s *sets) get(i int, buf *[]uint32) ([]uint32, error) {
	from, to := s.off[i], s.off[i+1]
	if to <= int64(len(s.mem)) {
		x := s.mem[from:to:to]
		if w, bit := i/64, uint64(1)<<(i%64); w >= len(s.sorted) || s.sorted[w]&bit == 0 {
			// Sorted in place; the places the repeats left are filled with the last
			// value, so the set is x up to its trailing repeats.
			k := len(minhash.SortUnique(x))
			for j := k; j < len(x); j++ {
				x[j] = x[k-1]
			}
			if w >= len(s.sorted) {
				s.sorted = append(s.sorted, make([]uint64, w+1-len(s.sorted))...)
			}
			s.sorted[w] |= bit
		}
		for len(x) > 1 && x[len(x)-1] == x[len(x)-2] {
			x = x[: len(x)-1 : len(x)-1]
		}
		return x, nil
	}
	n := int(to - from)
	s.buf = slicesGrow(s.buf, 4*n)
	if _, err := s.f.ReadAt(s.buf, 4*(from-int64(len(s.mem)))); err != nil {
		return nil, fmt.Errorf("dedup: reading shingle sets from %s: %w", s.f.Name(), err)
	}
	dst := (*buf)[:0]
	for j := range n {
		dst = append(dst, binary.LittleEndian.Uint32(s.buf[4*j:]))
	}
	*buf = dst
	return minhash.SortUnique(dst), nil
}

// slicesGrow returns b with length n, reusing its memory when it has room.
func slicesGrow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// close removes the temporary file and lets the memory go.
func (s *sets) close() error {
	if s == nil {
		return nil
	}
	s.mem, s.off, s.sorted, s.buf = nil, nil, nil, nil
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	s.f, s.w = nil, nil
	if err != nil {
		return fmt.Errorf("dedup: removing the shingle sets' file: %w", err)
	}
	return nil
}

// nearMinHash finds the near pairs among firsts (documents in input order): an lsh.Index
// banded for recall at the threshold makes the candidates, and each candidate becomes a
// pair only if the exact similarity of the two sets (Jaccard, or containment with
// o.Containment) reaches the threshold. A candidate whose MinHash estimate lies far below
// the threshold is rejected without reading its set.
func (r *Result) nearMinHash(firsts []int32, st *sets, o Options) ([]Pair, error) {
	bands, rows := lsh.RecallParams(o.Threshold, missAtThreshold, o.MinHashK)
	x, err := lsh.New(lsh.Options{Threshold: o.Threshold, K: o.MinHashK, Bands: bands, Rows: rows})
	if err != nil {
		return nil, fmt.Errorf("dedup: %w", err)
	}
	floor := o.estimateFloor()
	var (
		pairs      []Pair
		i          int // the query
		sig        minhash.Signature
		q          []uint32 // the query's set, read at its first candidate
		qbuf, cbuf []uint32 // the sets read from the file, the query's and a candidate's
		verifyErr  error
	)
	verify := func(id uint64) (float64, bool) {
		j := int(id)
		if minhash.Similarity(sig, r.Signature(j)) < floor {
			return 0, true
		}
		if q == nil {
			var err error
			if q, err = st.get(i, &qbuf); err != nil {
				verifyErr = err
				return 0, false
			}
		}
		c, err := st.get(j, &cbuf)
		if err != nil {
			verifyErr = err
			return 0, false
		}
		return setSimilarity(q, c, o.Containment), true
	}
	for _, f := range firsts {
		i, q = int(f), nil
		sig = r.Signature(i)
		matches, err := x.QueryVerified(sig, verify)
		if err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
		if verifyErr != nil {
			return nil, verifyErr
		}
		for _, m := range matches {
			j := int(m.ID)
			pairs = append(pairs, Pair{A: j, B: i, Method: MinHash, Similarity: m.Similarity,
				Estimate: minhash.Similarity(sig, r.Signature(j))})
		}
		if err := x.Add(uint64(i), sig); err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
	}
	return pairs, nil
}

// estimateFloor is the MinHash estimate below which a candidate is rejected without its
// set being read (see estimateSigmas); with Containment, none is.
func (o *Options) estimateFloor() float64 {
	if o.Containment {
		// Containment can be high where Jaccard, and so the estimate, is low.
		return math.Inf(-1)
	}
	return o.Threshold - estimateSigmas*math.Sqrt(o.Threshold*(1-o.Threshold)/float64(o.MinHashK))
}

// setSimilarity is the exact similarity of two sorted, distinct shingle sets that makes
// a near pair: Jaccard, or with containment the smaller set's share of its shingles
// found in the other.
func setSimilarity(a, b []uint32, containment bool) float64 {
	if !containment {
		return minhash.Jaccard(a, b)
	}
	if len(b) < len(a) {
		a, b = b, a
	}
	return minhash.Containment(a, b)
}
