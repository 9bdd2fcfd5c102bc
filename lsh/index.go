package lsh

import (
	"cmp"
	"slices"
	"sync"

	"github.com/neardup/neardup/minhash"
)

// Match is one result of a query: an indexed id and its similarity to the query, the
// signature estimate (or, for QueryVerified, the verifier's value).
type Match struct {
	ID         uint64
	Similarity float64
}

const (
	// maxSlots is the most signatures an index holds: slots are uint32 and the id table
	// stores slot+1.
	maxSlots = 1<<32 - 1
	// bucketLoad is the mean bucket length at which the bucket count doubles.
	bucketLoad = 16
	// minBucketBits and maxBucketBits bound the bucket bits of the band tables.
	minBucketBits = 4
	maxBucketBits = 28
)

// Index finds, among indexed MinHash signatures, those whose estimated Jaccard similarity
// to a query reaches a threshold. It cuts each signature into Bands bands of Rows values
// and keeps one hash table per band; a query looks up its own bands, and every indexed
// signature that agrees with it on a whole band is a candidate, verified against the full
// signature estimate before it is returned. Pairs are found with Probability(s, Bands,
// Rows) (the S-curve): the index is exact for the candidates it sees, but may miss a pair
// just above the threshold (see Recall).
//
// Layout: signatures are stored once, in fixed chunks of 4096 slots (4*K bytes each), with
// their ids; an open-addressing table maps ids to slots. Each band's table is an array of
// buckets addressed by the top bits of the band's 64-bit key (see AppendBandKeys), and a
// bucket entry packs the next 32 bits of the key with the slot (8 bytes), so a lookup
// rejects almost every other band without touching a signature. Memory is about
// 4*K + 16 + 12*Bands bytes per signature (about 640 at the default K = 128 with 9 bands);
// MemoryUsage reports the exact figure.
//
// Costs: Add and Remove hash Bands bands and update one bucket per band, amortized (now
// and then a table doubles, rehashing every signature); a query hashes its bands, scans one
// bucket per band (8 to 16 entries) and compares each candidate's K values once.
//
// An Index is safe for concurrent use: one sync.RWMutex guards a single-threaded core;
// queries, Len, MemoryUsage, Options and WriteTo take the read lock and run in parallel,
// Add and Remove take the write lock. The zero value is an empty index with the zero
// Options. An Index must not be copied after first use.
type Index struct {
	mu sync.RWMutex
	c  core
}

// New returns an empty index with the given options, resolved as Options describes. It
// returns an error wrapping ErrOptions when they are invalid; choosing the banding costs
// under a millisecond unless it is the default or given.
func New(opt Options) (*Index, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	x := &Index{}
	x.c.init(o)
	return x, nil
}

// Options returns the index's options with every default resolved: the threshold, K, the
// banding and the weights it was chosen with.
func (x *Index) Options() Options {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.c.opt.K == 0 {
		return zeroOptions()
	}
	return x.c.opt
}

// zeroOptions returns the resolved zero Options.
func zeroOptions() Options {
	return Options{Threshold: DefaultThreshold, K: minhash.DefaultK, Bands: DefaultBands, Rows: DefaultRows, FPWeight: 0.5, FNWeight: 0.5}
}

// Add indexes sig under id, replacing the signature id had. It copies sig and does not
// keep it. It returns an error wrapping ErrSignature, and changes nothing, when len(sig)
// is not K. Add panics when the index already holds 2^32-1 signatures.
func (x *Index) Add(id uint64, sig minhash.Signature) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.c.opt.K == 0 {
		x.c.init(zeroOptions())
	}
	if err := x.c.check(sig); err != nil {
		return err
	}
	x.c.add(id, sig)
	return nil
}

// Remove deletes id from the index and reports whether it was there. Its slot is reused by
// a later Add.
func (x *Index) Remove(id uint64) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.c.remove(id)
}

// Len returns the number of indexed signatures.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.n
}

// Query returns every indexed id whose signature shares a band with sig and whose
// estimated similarity to it (minhash.Similarity) is at least the threshold, sorted by
// similarity, highest first, then by id, in a new slice (nil when there is none). It
// returns an error wrapping ErrSignature when len(sig) is not K. See AppendQuery.
func (x *Index) Query(sig minhash.Signature) ([]Match, error) {
	return x.AppendQuery(nil, sig)
}

// AppendQuery appends to dst the matches Query would return and returns the extended
// slice; it allocates only when dst lacks room. dst's earlier elements are left alone; on
// error dst is returned unchanged. It costs Bands band hashes, a scan of one bucket per
// band, and one signature comparison per distinct candidate (an indexed signature that
// shares several bands with sig is compared once).
func (x *Index) AppendQuery(dst []Match, sig minhash.Signature) ([]Match, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if err := x.c.check(sig); err != nil {
		return dst, err
	}
	if x.c.n == 0 {
		return dst, nil
	}
	start := len(dst)
	x.c.candidates(sig, func(slot uint32, cand minhash.Signature) {
		if m, ok := x.c.verify(sig, cand); ok {
			dst = append(dst, Match{ID: x.c.id(slot), Similarity: float64(m) / float64(len(sig))})
		}
	})
	slices.SortFunc(dst[start:], compareMatches)
	return dst, nil
}

// TopK returns the k best matches of Query: at most k, with the highest similarities,
// ties broken by id. k <= 0 returns nil.
func (x *Index) TopK(sig minhash.Signature, k int) ([]Match, error) {
	ms, err := x.Query(sig)
	if err != nil || k <= 0 {
		return nil, err
	}
	if len(ms) > k {
		ms = slices.Clip(ms[:k])
	}
	return ms, nil
}

// QueryVerified is Query with the caller's own verifier: for every candidate that shares
// a band with sig, it calls verify(id), which returns the candidate's real similarity (for
// example minhash.Jaccard of the stored features) and whether the id is still known; a
// candidate is a match when verify returns true and a similarity of at least the
// threshold. The signature estimate is not consulted, so pairs it would misjudge near the
// threshold are decided exactly; the banding still decides which pairs are seen.
//
// verify is called without the index's lock held, once per candidate, from the calling
// goroutine; it may use the index. The matches are sorted as Query's.
func (x *Index) QueryVerified(sig minhash.Signature, verify func(id uint64) (float64, bool)) ([]Match, error) {
	x.mu.RLock()
	if err := x.c.check(sig); err != nil {
		x.mu.RUnlock()
		return nil, err
	}
	var ids []uint64
	if x.c.n > 0 {
		x.c.candidates(sig, func(slot uint32, _ minhash.Signature) {
			ids = append(ids, x.c.id(slot))
		})
	}
	threshold := x.c.opt.Threshold
	x.mu.RUnlock()
	var out []Match
	for _, id := range ids {
		if s, ok := verify(id); ok && s >= threshold {
			out = append(out, Match{ID: id, Similarity: s})
		}
	}
	slices.SortFunc(out, compareMatches)
	return out, nil
}

// MemoryUsage returns the bytes held by the index's structures, computed from their
// capacities: the signature and id chunks, the free list, the id table and every band's
// bucket headers and entries. Divide by Len for the bytes per signature. It walks every
// bucket header, about a millisecond per million buckets.
func (x *Index) MemoryUsage() int64 {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.c.memoryUsage()
}

// compareMatches orders matches by similarity, highest first, then by id.
func compareMatches(a, b Match) int {
	if c := cmp.Compare(b.Similarity, a.Similarity); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}
