package dedup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/shingle"
	"github.com/neardup/neardup/simhash"
)

// corpusDocs returns n documents: bases of 300 random words, with exact copies (case
// changed), near copies (a few words changed) and unrelated documents, deterministic in
// seed.
func corpusDocs(seed uint64, n int) []neardup.Document {
	r := rand.New(rand.NewPCG(seed, 3))
	word := func() string { return fmt.Sprintf("w%d", r.IntN(20000)) }
	var docs []neardup.Document
	var bases [][]string
	for i := range n {
		var w []string
		switch {
		case len(bases) > 0 && i%7 == 3: // exact copy, other case
			b := bases[r.IntN(len(bases))]
			w = append(w, strings.ToUpper(strings.Join(b, " ")))
		case len(bases) > 0 && i%5 == 2: // near copy
			w = slices.Clone(bases[r.IntN(len(bases))])
			for range 1 + r.IntN(4) {
				w[r.IntN(len(w))] = word()
			}
		default:
			w = make([]string, 300)
			for j := range w {
				w[j] = word()
			}
			bases = append(bases, w)
		}
		docs = append(docs, neardup.Document{ID: fmt.Sprintf("d%04d", i), Text: strings.Join(w, " ")})
	}
	return docs
}

func source(docs []neardup.Document) Source {
	i := 0
	return func() (neardup.Document, error) {
		if i == len(docs) {
			return neardup.Document{}, io.EOF
		}
		i++
		return docs[i-1], nil
	}
}

func run(t *testing.T, docs []neardup.Document, opt Options) *Result {
	t.Helper()
	res, err := Run(source(docs), opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// outputs returns every file a run writes.
func outputs(t *testing.T, r *Result) string {
	var b bytes.Buffer
	for _, f := range []func(io.Writer) error{r.WriteClusters, r.WritePairs,
		func(w io.Writer) error { return r.WriteIDs(w, true) }, func(w io.Writer) error { return r.WriteIDs(w, false) }} {
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		b.WriteString("--\n")
	}
	fmt.Fprintf(&b, "%+v\n", r.Summary())
	return b.String()
}

func TestRunDeterministic(t *testing.T) {
	docs := corpusDocs(1, 3000) // three batches
	for _, m := range []neardup.Near{All, Exact, SimHash, MinHash} {
		one := outputs(t, run(t, docs, Options{Pipeline: neardup.Pipeline{Near: m}, Threads: 1}))
		four := outputs(t, run(t, docs, Options{Pipeline: neardup.Pipeline{Near: m}, Threads: 4}))
		if one != four {
			t.Fatalf("%v: outputs differ between 1 and 4 threads", m)
		}
	}
}

// TestRunOracle checks the pairs against brute force over the first document of every
// exact group: every reported pair is within the thresholds (MinHash: by the exact
// Jaccard similarity of the shingle sets, computed here by the labels' own definition),
// and every pair brute force finds ends in one cluster (SimHash: always, as FindAllDocs
// links documents with equal fingerprints through the first of them; MinHash: but for a
// few the banding's S-curve misses).
func TestRunOracle(t *testing.T) {
	docs := corpusDocs(2, 1500)
	for _, m := range []neardup.Near{SimHash, MinHash} {
		res := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: m}})
		feats := make([][]uint64, len(docs)) // the exact sets, by the labels' definition
		for i, d := range docs {
			feats[i] = evaldata.RefShingles(d.Text)
		}
		firstOf := map[neardup.Hash]int{}
		var firsts []int
		exact := 0
		for i, d := range res.Docs {
			if _, ok := firstOf[d.Main]; ok {
				exact++
				continue
			}
			firstOf[d.Main] = i
			firsts = append(firsts, i)
		}
		want := map[[2]int]bool{}
		for x, a := range firsts {
			for _, b := range firsts[x+1:] {
				da, db := res.Docs[a], res.Docs[b]
				if (m == SimHash && simhash.Distance(da.SimHash, db.SimHash) <= neardup.DefaultDistance) ||
					(m == MinHash && minhash.Jaccard(feats[a], feats[b]) >= neardup.DefaultBatchThreshold) {
					want[[2]int{a, b}] = true
				}
			}
		}
		got, exactPairs := map[[2]int]bool{}, 0
		for _, p := range res.Pairs {
			if p.Method == Exact {
				exactPairs++
				if res.Docs[p.A].Main != res.Docs[p.B].Main {
					t.Fatalf("exact pair %+v with different texts", p)
				}
				continue
			}
			got[[2]int{p.A, p.B}] = true
			if !want[[2]int{p.A, p.B}] {
				t.Fatalf("%v: pair %+v is not within the thresholds", m, p)
			}
			if j := minhash.Jaccard(feats[p.A], feats[p.B]); m == MinHash && p.Similarity != j {
				t.Fatalf("%v: pair %+v: similarity is not the exact Jaccard %v", m, p, j)
			}
		}
		if exactPairs != exact {
			t.Errorf("%v: %d exact pairs, %d exact duplicates", m, exactPairs, exact)
		}
		apart := 0
		for p := range want {
			if res.Docs[p[0]].Cluster != res.Docs[p[1]].Cluster {
				apart++
			}
		}
		if m == SimHash && apart != 0 || len(want) == 0 || float64(apart) > 0.02*float64(len(want)) {
			t.Errorf("%v: %d of %d pairs in different clusters", m, apart, len(want))
		}
		t.Logf("%v: %d near pairs by brute force, %d reported, %d left in different clusters; %d exact", m, len(want), len(got), apart, exact)
	}
}

func TestRunClustersAndKeep(t *testing.T) {
	base := corpusDocs(7, 1)[0].Text // 300 random words
	docs := []neardup.Document{
		{ID: "a", Text: base},
		{ID: "b", Text: "something else entirely, not like the others at all"},
		{ID: "c", Text: strings.ToUpper(base), Priority: 2},
		{ID: "d", Text: base + " lambda"},
	}
	res := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: SimHash}})
	if len(res.Clusters) != 1 {
		t.Fatalf("clusters %+v", res.Clusters)
	}
	c := res.Clusters[0]
	if !slices.Equal(c.Members, []int{0, 2, 3}) || res.Docs[c.Representative].ID != "c" {
		t.Fatalf("cluster %+v, want a, c, d represented by c (priority 2)", c)
	}
	var b bytes.Buffer
	res.WriteClusters(&b)
	if want := `{"cluster":0,"representative":"c","size":3,"members":[{"id":"a","exact":true},{"id":"c"},{"id":"d","distance":`; !strings.HasPrefix(b.String(), want) {
		t.Fatalf("clusters.jsonl %q", b.String())
	}
	b.Reset()
	res.WriteIDs(&b, false)
	if b.String() != "a\nd\n" {
		t.Fatalf("drop list %q", b.String())
	}
	s := res.Summary()
	if s.Documents != 4 || s.Dropped != 2 || s.Kept != 2 || s.ExactDuplicates != 1 || s.DroppedBytes != int64(len(docs[0].Text)+len(docs[3].Text)) {
		t.Fatalf("summary %+v", s)
	}
	// first wins without priorities
	res = run(t, docs, Options{Pipeline: neardup.Pipeline{Near: SimHash, Keep: neardup.KeepPolicy{neardup.KeepFirstSeen}}})
	if res.Docs[res.Clusters[0].Representative].ID != "a" {
		t.Fatal("keep first did not keep a")
	}
	res = run(t, docs, Options{Pipeline: neardup.Pipeline{Near: SimHash, Keep: neardup.KeepPolicy{neardup.KeepLongest}}})
	if res.Docs[res.Clusters[0].Representative].ID != "d" {
		t.Fatal("keep longest did not keep d")
	}
}

func TestRunErrors(t *testing.T) {
	docs := []neardup.Document{{ID: "a", Text: "x"}, {Text: "no id"}, {ID: "c", Text: "y"}}
	var seen []string
	res, err := Run(source(docs), Options{}, func(d neardup.Document, err error) error {
		seen = append(seen, d.Text+": "+err.Error())
		return nil
	})
	if err != nil || res.Skipped != 1 || len(res.Docs) != 2 || len(seen) != 1 {
		t.Fatalf("skip: %v %+v %q", err, res, seen)
	}
	stop := errors.New("stop")
	if _, err := Run(source(docs), Options{}, func(neardup.Document, error) error { return stop }); err != stop {
		t.Fatalf("stop: %v", err)
	}
	bad := errors.New("read failed")
	n := 0
	src := func() (neardup.Document, error) {
		if n++; n > 2000 {
			return neardup.Document{}, bad
		}
		return neardup.Document{ID: fmt.Sprint(n), Text: "t"}, nil
	}
	if _, err := Run(src, Options{}, nil); err != bad {
		t.Fatalf("source error: %v", err)
	}
	for _, o := range []Options{{Pipeline: neardup.Pipeline{Near: 9}}, {Pipeline: neardup.Pipeline{Near: neardup.NearAny}}, {Pipeline: neardup.Pipeline{Near: neardup.NearBoth}}, {Pipeline: neardup.Pipeline{Threshold: 2}}, {Pipeline: neardup.Pipeline{Distance: 40}}, {Pipeline: neardup.Pipeline{MinHashK: -1}}, {Pipeline: neardup.Pipeline{Shingle: shingle.Options{K: -1}}}} {
		if _, err := Run(source(docs), o, nil); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
		if err := o.Validate(); !errors.Is(err, ErrOptions) {
			t.Errorf("Validate %+v: %v", o, err)
		}
	}
}

// TestRunStopsReading checks that after an early return Run no longer calls the source,
// so that the caller may close it (run with -race).
func TestRunStopsReading(t *testing.T) {
	var mu sync.Mutex
	closed, n := false, 0
	src := func() (neardup.Document, error) {
		time.Sleep(20 * time.Microsecond) // a reader slower than fingerprinting
		mu.Lock()
		defer mu.Unlock()
		if closed {
			t.Error("source called after Run returned")
		}
		n++
		if n%3 == 0 {
			return neardup.Document{Text: "no id"}, nil
		}
		return neardup.Document{ID: fmt.Sprint(n), Text: "text"}, nil // never ends
	}
	stop := errors.New("stop")
	_, err := Run(src, Options{}, func(neardup.Document, error) error { return stop })
	mu.Lock()
	closed = true
	mu.Unlock()
	if err != stop {
		t.Fatalf("Run: %v", err)
	}
}

// TestRunProgressStages: Progress hears of every document read, in order, then of each
// later stage once, so that a caller can show what the run is doing.
func TestRunProgressStages(t *testing.T) {
	docs := corpusDocs(2, 1500)
	var calls []string
	reads := 0
	res := run(t, docs, Options{Progress: func(stage string, n int) {
		if stage == StageRead {
			reads++
			if n != reads {
				t.Fatalf("read call %d says %d documents", reads, n)
			}
			if len(calls) == 0 || calls[len(calls)-1] != StageRead {
				calls = append(calls, stage)
			}
			return
		}
		if n != len(docs) {
			t.Errorf("%s: %d documents, want %d", stage, n, len(docs))
		}
		calls = append(calls, stage)
	}})
	if want := []string{StageRead, StageFind, StageCluster}; !slices.Equal(calls, want) || reads != len(res.Docs) {
		t.Fatalf("stages %q after %d reads, want %q after %d", calls, reads, want, len(res.Docs))
	}
}

// TestRunEmptyMainText: documents whose main text is empty once normalized (punctuation,
// a page with no text) are exact duplicates of nothing, as in the Detector.
func TestRunEmptyMainText(t *testing.T) {
	docs := []neardup.Document{
		{ID: "a", Text: "!!!"}, {ID: "b", Text: "???"}, {ID: "c", HTML: []byte("<html><body><img src=x></body></html>")},
		{ID: "d", Text: "real words here"}, {ID: "e", Text: "Real words here!"},
	}
	res := run(t, docs, Options{Pipeline: neardup.Pipeline{Near: SimHash}})
	if len(res.Clusters) != 1 || !slices.Equal(res.Clusters[0].Members, []int{3, 4}) {
		t.Fatalf("clusters %+v, want d and e only", res.Clusters)
	}
	if s := res.Score(0, 1); s.Exact {
		t.Errorf("Score of two empty main texts: %+v", s)
	}
}
