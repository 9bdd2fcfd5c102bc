package dedup

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
)

// Doc is what a Run keeps of one input document: its identity, size, keep-policy fields
// and fingerprints (the text itself is not kept; the MinHash signature is kept by the
// Result, see Result.Signature). It is about 100 bytes plus the id and URL, so that ten
// million documents fit in about a gigabyte.
type Doc struct {
	ID        string
	URL       string       // canonical
	Main      neardup.Hash // SHA-256 of the normalized main text
	SimHash   uint64       // method simhash and exact (0 otherwise)
	Priority  float64
	FetchTime int64 // Unix nanoseconds; 0 when unknown
	Bytes     int32 // of the content as read (HTML or text)
	Words     int32 // of the normalized main text
	// Cluster is the index in Result.Clusters of the document's cluster, -1 when it has
	// no duplicate.
	Cluster int32
	// Kept is false for the documents the keep policy drops: every member of a cluster
	// but its representative.
	Kept bool
}

// Pair is one verified duplicate pair.
type Pair struct {
	A, B   int          // indices in Result.Docs, A < B
	Method neardup.Near // Exact, SimHash or MinHash
	// Distance is the SimHash distance (method SimHash).
	Distance int
	// Similarity is the exact Jaccard similarity of the two documents' shingle sets, or
	// with Options.Containment the share of the smaller set's shingles found in the
	// other (method MinHash): what made the pair. Estimate is the MinHash estimate of
	// their Jaccard similarity over all K values, which only chose the candidates.
	Similarity float64
	Estimate   float64
}

// Cluster is a connected component of the duplicate pairs.
type Cluster struct {
	ID             int   // 0, 1, ... in the order of their first member
	Representative int   // the document kept, chosen by the keep policy
	Members        []int // indices in Result.Docs, ascending, the representative included
}

// Timing is the wall time one stage took.
type Timing struct {
	Stage   string
	Seconds float64
}

// Result is everything a Run found.
type Result struct {
	Options  Options  // with defaults filled in
	Docs     []Doc    // in input order
	sigs     []uint32 // method minhash and all: document i's signature is sigs[i*K:(i+1)*K]
	Pairs    []Pair   // sorted by (A, B)
	Clusters []Cluster
	// Skipped counts the documents that could not be fingerprinted (OnError said to go
	// on).
	Skipped int
	Timings []Timing
}

// Source yields the documents of a corpus in order; it returns io.EOF after the last one.
// Any other error stops the run and is returned by Run.
type Source func() (neardup.Document, error)

// batchSize is the number of documents fingerprinted together while the next batch is
// read.
const batchSize = 1024

// Run reads every document from src, fingerprints it (on Threads goroutines), groups the
// exact duplicates, finds the near-duplicate pairs among the first document of each exact
// group by the method's index (every candidate verified against the full fingerprint),
// and forms clusters with a representative chosen by the keep policy. The result does not
// depend on Threads.
//
// onError is called with each document that cannot be fingerprinted (see
// neardup.Fingerprinter.Fingerprint: over the extraction limits, a URL that cannot be
// canonicalized, no id): nil goes on without it (Result.Skipped counts it), an error
// stops the run. A nil onError goes on. For each document read, either onError or
// Options.Progress is called once, in the order src gave the documents, from one
// goroutine, so a caller can match them to what it read.
func Run(src Source, opt Options, onError func(doc neardup.Document, err error) error) (*Result, error) {
	o, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	near := nearOf(o.Near)
	fpr, err := o.fingerprinter()
	if err != nil {
		return nil, err
	}
	res := &Result{Options: o}
	if o.Expected > 0 {
		res.Docs = make([]Doc, 0, o.Expected)
		if near == MinHash {
			res.sigs = make([]uint32, 0, o.Expected*o.MinHashK)
		}
	}
	var st *sets // the shingle sets that verify MinHash candidates, for the search only
	if near == MinHash {
		st = newSets(o.VerifyMemory, o.TempDir, o.Expected)
		defer st.close()
	}
	start := time.Now()
	if err := res.read(src, fpr, st, o, onError); err != nil {
		return nil, err
	}
	res.lap("read and fingerprint", &start)
	if o.Progress != nil {
		o.Progress(StageFind, len(res.Docs))
	}
	pairs, err := res.find(st, o)
	if err != nil {
		return nil, err
	}
	if err := st.close(); err != nil {
		return nil, err
	}
	res.lap("find duplicates", &start)
	if o.Progress != nil {
		o.Progress(StageCluster, len(res.Docs))
	}
	res.cluster(pairs, o.Keep)
	res.lap("cluster", &start)
	return res, nil
}

func (r *Result) lap(stage string, start *time.Time) {
	now := time.Now()
	r.Timings = append(r.Timings, Timing{stage, now.Sub(*start).Seconds()})
	*start = now
}

// batch is a batch of documents read from a Source; err is io.EOF after the last one.
type batch struct {
	docs []neardup.Document
	err  error
}

// readBatches sends the documents of src in batches until an error or stop.
func readBatches(src Source, batches chan<- batch, stop <-chan struct{}) {
	for {
		b := batch{docs: make([]neardup.Document, 0, batchSize)}
		for len(b.docs) < batchSize {
			select {
			case <-stop:
				return
			default:
			}
			doc, err := src()
			if err != nil {
				b.err = err
				break
			}
			b.docs = append(b.docs, doc)
		}
		select {
		case batches <- b:
		case <-stop:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// fingerprints holds one batch's fingerprints, errors, features and shingle sets, reused
// batch after batch.
type fingerprints struct {
	fps      []neardup.Fingerprints
	errs     []error
	feats    [][]uint64
	shingles [][]uint32
}

// fingerprint fingerprints docs on threads goroutines, with the features and sets of
// the MinHash search when sets is true.
func (f *fingerprints) fingerprint(fpr *neardup.Fingerprinter, docs []neardup.Document, threads int, sets bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(threads, len(docs)) {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < len(docs); i = int(next.Add(1)) - 1 {
				if !sets {
					f.fps[i], f.errs[i] = fpr.Fingerprint(docs[i])
					continue
				}
				f.fps[i], f.feats[i], f.errs[i] = fpr.FingerprintFeatures(docs[i], f.feats[i][:0])
				f.shingles[i] = minhash.AppendLow32(f.shingles[i][:0], f.feats[i])
			}
		})
	}
	wg.Wait()
}

// read fills r.Docs, and st when it is not nil: a goroutine reads batches from src while
// Threads goroutines fingerprint the previous batch.
func (r *Result) read(src Source, fpr *neardup.Fingerprinter, st *sets, o Options, onError func(neardup.Document, error) error) error {
	batches := make(chan batch, 1)
	stop := make(chan struct{})
	// On an early return the reader stops before Run returns, so that the caller may
	// close what src reads from.
	var reader sync.WaitGroup
	defer func() {
		close(stop)
		reader.Wait()
	}()
	reader.Go(func() { readBatches(src, batches, stop) })

	f := &fingerprints{fps: make([]neardup.Fingerprints, batchSize), errs: make([]error, batchSize),
		feats: make([][]uint64, batchSize), shingles: make([][]uint32, batchSize)}
	for b := range batches {
		f.fingerprint(fpr, b.docs, o.Threads, st != nil)
		for i, doc := range b.docs {
			if f.errs[i] != nil {
				r.Skipped++
				if onError != nil {
					if err := onError(doc, f.errs[i]); err != nil {
						return err
					}
				}
				continue
			}
			if err := r.add(doc, &f.fps[i], f.shingles[i], st); err != nil {
				return err
			}
			if o.Progress != nil {
				o.Progress(StageRead, len(r.Docs))
			}
		}
		if b.err != nil {
			if errors.Is(b.err, io.EOF) {
				return nil
			}
			return b.err
		}
	}
	return nil
}

// add appends a fingerprinted document to r.Docs, its signature to r.sigs and its
// shingle set to st when st is not nil.
func (r *Result) add(doc neardup.Document, fp *neardup.Fingerprints, shingles []uint32, st *sets) error {
	size := len(doc.HTML)
	if doc.HTML == nil {
		size = len(doc.Text)
	}
	var fetch int64
	if !doc.FetchTime.IsZero() {
		fetch = doc.FetchTime.UnixNano()
	}
	r.Docs = append(r.Docs, Doc{
		ID: doc.ID, URL: fp.URL, Main: fp.Main, SimHash: fp.SimHash,
		Priority: doc.Priority, FetchTime: fetch,
		Bytes: int32(min(size, math.MaxInt32)), Words: int32(min(fp.Words, math.MaxInt32)),
		Cluster: -1, Kept: true,
	})
	r.sigs = append(r.sigs, fp.MinHash...)
	if st != nil {
		return st.add(shingles)
	}
	return nil
}

// find returns the verified pairs: every document paired with the first document of its
// exact group, then the near pairs among those first documents (MinHash candidates
// verified by their sets in st).
func (r *Result) find(st *sets, o Options) ([]Pair, error) {
	pairs, isFirst := exactGroups(r.Docs)
	var firsts []int32 // documents first of their exact group, with some words
	for i := range r.Docs {
		if isFirst[i] && r.Docs[i].Words > 0 {
			firsts = append(firsts, int32(i))
		}
	}
	switch nearOf(o.Near) {
	case SimHash:
		fps := make([]uint64, len(firsts))
		for j, i := range firsts {
			fps[j] = r.Docs[i].SimHash
		}
		found, err := hamming.Finder{Distance: o.Distance, Threads: o.Threads}.FindAllDocs(fps)
		if err != nil {
			return nil, fmt.Errorf("dedup: %w", err)
		}
		for _, p := range found {
			pairs = append(pairs, Pair{A: int(firsts[p.A]), B: int(firsts[p.B]), Method: SimHash, Distance: p.Distance})
		}
	case MinHash:
		if err := st.finish(); err != nil {
			return nil, err
		}
		near, err := r.nearMinHash(firsts, st, o)
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, near...)
	}
	sortPairs(pairs)
	return pairs, nil
}

// exactGroups pairs every document of docs (in input order) with the first document of
// its exact group, and reports which documents are first of their group. A document
// without main text is a group of its own.
func exactGroups(docs []Doc) ([]Pair, []bool) {
	// Documents sorted by hash (then input order), each paired with the first of its
	// run. A sort of 4-byte indices costs far less memory than a map of 32-byte hashes
	// at ten million documents.
	order := make([]int32, len(docs))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		return cmp.Or(bytes.Compare(docs[a].Main[:], docs[b].Main[:]), cmp.Compare(a, b))
	})
	var pairs []Pair
	isFirst := make([]bool, len(docs))
	for j := 0; j < len(order); {
		f := order[j]
		isFirst[f] = true
		for j++; j < len(order) && docs[order[j]].Main == docs[f].Main; j++ {
			if docs[f].Main.Empty() {
				// No main text: nothing to compare, so each is a group of its own.
				isFirst[order[j]] = true
				continue
			}
			pairs = append(pairs, Pair{A: int(f), B: int(order[j]), Method: Exact})
		}
	}
	return pairs, isFirst
}

// sortPairs sorts pairs by (A, B), the order of Result.Pairs.
func sortPairs(pairs []Pair) {
	slices.SortFunc(pairs, func(a, b Pair) int { return cmp.Or(cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B)) })
}

// cluster sets r.Pairs, r.Clusters and each document's Cluster and Kept.
func (r *Result) cluster(pairs []Pair, keep neardup.KeepPolicy) {
	r.Pairs = pairs
	links := make([]hamming.DocPair, len(pairs))
	for i, p := range pairs {
		links[i] = hamming.DocPair{A: p.A, B: p.B}
	}
	better := func(a, b int) bool { return keep.Prefer(r.candidate(a), r.candidate(b)) }
	for _, c := range hamming.ClusterDocs(len(r.Docs), links, hamming.ClusterOptions{Better: better}) {
		r.Clusters = append(r.Clusters, Cluster{ID: c.ID, Representative: c.Representative, Members: c.Members})
		for _, m := range c.Members {
			r.Docs[m].Cluster = int32(len(r.Clusters) - 1)
			r.Docs[m].Kept = m == c.Representative
		}
	}
}

func (r *Result) candidate(i int) neardup.Candidate {
	d := &r.Docs[i]
	c := neardup.Candidate{ID: d.ID, Priority: d.Priority, Seq: uint64(i), Words: int(d.Words)}
	if d.FetchTime != 0 {
		c.FetchTime = time.Unix(0, d.FetchTime)
	}
	return c
}

// Signature returns document i's MinHash signature, or nil when the run made none (the
// methods exact and simhash). The result shares the Result's memory: do not change it.
func (r *Result) Signature(i int) minhash.Signature {
	return signatureAt(r.sigs, r.Options.MinHashK, i)
}

// signatureAt is document i's signature in sigs, where each takes k values; nil when sigs
// holds none for it.
func signatureAt(sigs []uint32, k, i int) minhash.Signature {
	if len(sigs) < (i+1)*k {
		return nil
	}
	return sigs[i*k : (i+1)*k : (i+1)*k]
}

// Score is how a cluster member compares with its representative.
type Score struct {
	Exact      bool    // the same normalized main text
	Distance   int     // SimHash distance, when the run had SimHash fingerprints
	Similarity float64 // MinHash estimate, when the run had MinHash signatures
}

// Score compares documents a and b directly (they need not be a pair).
func (r *Result) Score(a, b int) Score {
	da, db := &r.Docs[a], &r.Docs[b]
	s := Score{Exact: da.Main == db.Main && !da.Main.Empty(), Distance: simhash.Distance(da.SimHash, db.SimHash)}
	if sa, sb := r.Signature(a), r.Signature(b); sa != nil && sb != nil {
		s.Similarity = minhash.Similarity(sa, sb)
	}
	return s
}
