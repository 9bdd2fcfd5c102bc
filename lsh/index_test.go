package lsh

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/neardup/neardup/minhash"
)

func mustNew(t testing.TB, o Options) *Index {
	t.Helper()
	x, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// model is the oracle: the signatures an index should hold.
type model map[uint64]minhash.Signature

// randomSig returns a random signature of k values.
func randomSig(r *rand.Rand, k int) minhash.Signature {
	s := make(minhash.Signature, k)
	for i := range s {
		s[i] = r.Uint32()
	}
	return s
}

// mutate returns a copy of s with each value replaced with probability p: a signature
// whose expected similarity to s is 1-p.
func mutate(r *rand.Rand, s minhash.Signature, p float64) minhash.Signature {
	t := slices.Clone(s)
	for i := range t {
		if r.Float64() < p {
			t[i] = r.Uint32()
		}
	}
	return t
}

// sharesBand reports whether a and b agree on a whole band.
func sharesBand(a, b minhash.Signature, bands, rows int) bool {
	for i := range bands {
		if slices.Equal(a[i*rows:(i+1)*rows], b[i*rows:(i+1)*rows]) {
			return true
		}
	}
	return false
}

// bruteQuery is Query by brute force: every signature that shares a band and reaches the
// threshold, sorted.
func bruteQuery(m model, o Options, q minhash.Signature) []Match {
	var out []Match
	for id, s := range m {
		if sim := minhash.Similarity(q, s); sharesBand(q, s, o.Bands, o.Rows) && sim >= o.Threshold {
			out = append(out, Match{id, sim})
		}
	}
	slices.SortFunc(out, compareMatches)
	return out
}

// fill adds n signatures: random ones and mutated copies of earlier ones, so that queries
// have matches near the threshold.
func fill(r *rand.Rand, x *Index, m model, n int) {
	k := x.Options().K
	var all []minhash.Signature
	for _, s := range m {
		all = append(all, s)
	}
	for range n {
		id := r.Uint64N(uint64(4 * n))
		var s minhash.Signature
		if len(all) > 0 && r.IntN(2) == 0 {
			s = mutate(r, all[r.IntN(len(all))], r.Float64()*0.4)
		} else {
			s = randomSig(r, k)
		}
		if err := x.Add(id, s); err != nil {
			panic(err)
		}
		m[id] = s
		all = append(all, s)
	}
}

// checkIndex compares the index with the model: its length, and queries for indexed
// signatures, near copies of them and random ones, against brute force.
func checkIndex(t *testing.T, r *rand.Rand, x *Index, m model, queries int) {
	t.Helper()
	o := x.Options()
	if x.Len() != len(m) {
		t.Fatalf("Len = %d, model has %d", x.Len(), len(m))
	}
	var sigs []minhash.Signature
	for _, s := range m {
		sigs = append(sigs, s)
	}
	slices.SortFunc(sigs, slices.Compare)
	for i := range queries {
		var q minhash.Signature
		switch {
		case len(sigs) > 0 && i%3 == 0:
			q = sigs[r.IntN(len(sigs))]
		case len(sigs) > 0 && i%3 == 1:
			q = mutate(r, sigs[r.IntN(len(sigs))], r.Float64()*0.3)
		default:
			q = randomSig(r, o.K)
		}
		got, err := x.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteQuery(m, o, q); !slices.Equal(got, want) {
			t.Fatalf("query %d: got %v, want %v", i, got, want)
		}
	}
}

var testOptions = []Options{
	{}, // 9 x 13 of 128 at 0.8
	{K: 16, Threshold: 0.5, Bands: 4, Rows: 4},
	{K: 20, Threshold: 0.6, Bands: 3, Rows: 5}, // bands*rows < K
	{K: 7, Threshold: 0.4, Bands: 7, Rows: 1},
	{K: 64, Threshold: 0.9},
}

func TestIndexAgainstBruteForce(t *testing.T) {
	for _, o := range testOptions {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(o.K), 1))
			x := mustNew(t, o)
			m := model{}
			for _, n := range []int{0, 1, 50, 3000} {
				fill(r, x, m, n)
				checkIndex(t, r, x, m, 100)
			}
			// Remove about half, then add again: reused slots and shrinking buckets.
			for id := range m {
				if r.IntN(2) == 0 {
					if !x.Remove(id) {
						t.Fatalf("Remove(%d) = false for an indexed id", id)
					}
					delete(m, id)
				}
			}
			if x.Remove(1<<63 + 12345) {
				t.Fatal("Remove of an unknown id returned true")
			}
			checkIndex(t, r, x, m, 100)
			fill(r, x, m, 1000)
			checkIndex(t, r, x, m, 100)
		})
	}
}

func TestIndexReplace(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	x := mustNew(t, Options{})
	a, b := randomSig(r, 128), randomSig(r, 128)
	for _, s := range []minhash.Signature{a, a, b} {
		if err := x.Add(7, s); err != nil {
			t.Fatal(err)
		}
	}
	if x.Len() != 1 {
		t.Fatalf("Len = %d after replacing, want 1", x.Len())
	}
	if ms, _ := x.Query(a); len(ms) != 0 {
		t.Fatalf("the replaced signature still matches: %v", ms)
	}
	if ms, _ := x.Query(b); !slices.Equal(ms, []Match{{7, 1}}) {
		t.Fatalf("Query(new) = %v, want id 7 at 1", ms)
	}
	// The index copies the signature.
	b[0]++
	if ms, _ := x.Query(mutate(r, b, 0)); len(ms) != 1 || ms[0].Similarity == 1 {
		t.Fatalf("the index kept the caller's slice: %v", ms)
	}
}

func TestIndexWrongLength(t *testing.T) {
	x := mustNew(t, Options{K: 16, Bands: 4, Rows: 4})
	for _, s := range []minhash.Signature{nil, make(minhash.Signature, 15), make(minhash.Signature, 17)} {
		if err := x.Add(1, s); !errors.Is(err, ErrSignature) {
			t.Errorf("Add of %d values: %v, want ErrSignature", len(s), err)
		}
		if _, err := x.Query(s); !errors.Is(err, ErrSignature) {
			t.Errorf("Query of %d values: %v, want ErrSignature", len(s), err)
		}
		if _, err := x.TopK(s, 3); !errors.Is(err, ErrSignature) {
			t.Errorf("TopK of %d values: %v, want ErrSignature", len(s), err)
		}
		if _, err := x.QueryVerified(s, nil); !errors.Is(err, ErrSignature) {
			t.Errorf("QueryVerified of %d values: %v, want ErrSignature", len(s), err)
		}
	}
	if x.Len() != 0 {
		t.Fatal("a refused Add changed the index")
	}
}

func TestZeroIndex(t *testing.T) {
	var x Index
	if o := x.Options(); o != zeroOptions() {
		t.Fatalf("zero Index options %+v", o)
	}
	s := minhash.Hasher{}.Signature([]uint64{1, 2, 3})
	if ms, err := x.Query(s); ms != nil || err != nil {
		t.Fatalf("empty zero Index: %v, %v", ms, err)
	}
	if x.Remove(1) || x.Len() != 0 {
		t.Fatal("empty zero Index removed something")
	}
	if err := x.Add(1, s); err != nil {
		t.Fatal(err)
	}
	if ms, _ := x.Query(s); !slices.Equal(ms, []Match{{1, 1}}) {
		t.Fatalf("zero Index after Add: %v", ms)
	}
	if err := x.Add(2, s[:64]); !errors.Is(err, ErrSignature) {
		t.Fatalf("zero Index took a 64-value signature: %v", err)
	}
}

func TestNewOptions(t *testing.T) {
	x := mustNew(t, Options{Threshold: 0.9, K: 64, FNWeight: 1, FPWeight: 1})
	wantB, wantR := Params(0.9, 1, 1, 64)
	if o := x.Options(); o.Bands != wantB || o.Rows != wantR || o.Threshold != 0.9 || o.K != 64 {
		t.Fatalf("Options = %+v, want Params' (%d, %d)", o, wantB, wantR)
	}
	if b, r, err := (Options{Threshold: 0.9, K: 64, FNWeight: 1, FPWeight: 1}).Banding(); b != wantB || r != wantR || err != nil {
		t.Fatalf("Banding = %d, %d, %v, want Params' (%d, %d)", b, r, err, wantB, wantR)
	}
	if o := mustNew(t, Options{}).Options(); o != zeroOptions() {
		t.Fatalf("New(Options{}) = %+v, want %+v", o, zeroOptions())
	}
	bad := []Options{
		{Threshold: -0.1}, {Threshold: 1.5}, {K: -1}, {K: minhash.MaxK + 1},
		{Bands: 3}, {Rows: 3}, {Bands: -1, Rows: 2}, {Bands: 12, Rows: 11}, {K: 10, Bands: 11, Rows: 1},
		{FPWeight: -1}, {FNWeight: -1, FPWeight: 1},
	}
	for _, o := range bad {
		if _, err := New(o); !errors.Is(err, ErrOptions) {
			t.Errorf("New(%+v) = %v, want ErrOptions", o, err)
		}
		if _, _, err := o.Banding(); !errors.Is(err, ErrOptions) {
			t.Errorf("%+v.Banding() = %v, want ErrOptions", o, err)
		}
	}
}

func TestTopKAndVerified(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	x := mustNew(t, Options{K: 64, Threshold: 0.5, Bands: 16, Rows: 4})
	base := randomSig(r, 64)
	m := model{}
	for id := range uint64(30) {
		s := mutate(r, base, 0.25*float64(id)/30)
		m[id] = s
		if err := x.Add(id, s); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := x.Query(base)
	if len(all) < 10 {
		t.Fatalf("only %d matches", len(all))
	}
	top, _ := x.TopK(base, 5)
	if !slices.Equal(top, all[:5]) || cap(top) != 5 {
		t.Fatalf("TopK(5) = %v, want %v", top, all[:5])
	}
	if top, _ := x.TopK(base, 1000); !slices.Equal(top, all) {
		t.Fatal("TopK beyond the matches is not Query")
	}
	if top, _ := x.TopK(base, 0); top != nil {
		t.Fatal("TopK(0) is not nil")
	}

	// A verifier that calls back into the index (no lock held), forgets id 3 and
	// rates everything else by its id.
	calls := 0
	got, err := x.QueryVerified(base, func(id uint64) (float64, bool) {
		calls++
		x.Len()
		return 1 - float64(id)/20, id != 3
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []Match
	seen := 0
	for id, s := range m {
		if !sharesBand(base, s, 16, 4) {
			continue
		}
		seen++
		if sim := 1 - float64(id)/20; id != 3 && sim >= 0.5 {
			want = append(want, Match{id, sim})
		}
	}
	slices.SortFunc(want, compareMatches)
	if !slices.Equal(got, want) || calls != seen {
		t.Fatalf("QueryVerified = %v with %d calls, want %v with %d", got, calls, want, seen)
	}
}

func TestAppendQueryAllocs(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	x := mustNew(t, Options{})
	m := model{}
	fill(r, x, m, 2000)
	var q minhash.Signature
	for _, s := range m {
		q = s
		break
	}
	dst := make([]Match, 0, 64)
	if a := testing.AllocsPerRun(100, func() {
		dst, _ = x.AppendQuery(dst[:0], q)
	}); a != 0 {
		t.Fatalf("AppendQuery allocates %v times per call with room in dst", a)
	}
	if len(dst) == 0 {
		t.Fatal("the query found nothing")
	}
}

func TestConcurrent(t *testing.T) {
	x := mustNew(t, Options{K: 32, Threshold: 0.7, Bands: 8, Rows: 4})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 9))
			base := randomSig(r, 32)
			for i := range 500 {
				id := uint64(w)<<32 | uint64(i%100)
				switch i % 4 {
				case 0, 1:
					if err := x.Add(id, mutate(r, base, 0.2)); err != nil {
						panic(err)
					}
				case 2:
					if _, err := x.Query(base); err != nil {
						panic(err)
					}
					x.MemoryUsage()
				case 3:
					x.Remove(id)
				}
			}
		}()
	}
	wg.Wait()
	if x.Len() > 400 {
		t.Fatalf("Len = %d", x.Len())
	}
}

func TestMemoryUsage(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	x := mustNew(t, Options{})
	empty := x.MemoryUsage()
	for id := range uint64(20000) {
		if err := x.Add(id, randomSig(r, 128)); err != nil {
			t.Fatal(err)
		}
	}
	per := float64(x.MemoryUsage()-empty) / float64(x.Len())
	// 512 bytes of signature, 8 of id, 5-11 of id table, 9.5 to 12 per band entry.
	if per < 4*128+8+5+9*9 || per > 4*128+8+11+9*14 {
		t.Fatalf("%.0f bytes per signature is outside the documented range", per)
	}
	t.Logf("%.0f bytes per signature at %d signatures", per, x.Len())
}

func TestAppendBandKeys(t *testing.T) {
	r := rand.New(rand.NewPCG(6, 6))
	a := randomSig(r, 128)
	b := mutate(r, a, 0.3)
	ka := AppendBandKeys(nil, a, 9, 13)
	kb := AppendBandKeys([]uint64{42}, b, 9, 13)
	if len(ka) != 9 || len(kb) != 10 || kb[0] != 42 {
		t.Fatal("AppendBandKeys did not append 9 keys")
	}
	for i := range 9 {
		if eq := slices.Equal(a[i*13:(i+1)*13], b[i*13:(i+1)*13]); eq != (ka[i] == kb[i+1]) {
			t.Fatalf("band %d: values equal %v, keys equal %v", i, eq, ka[i] == kb[i+1])
		}
	}
	// Bands with equal values but different positions get different keys.
	same := make(minhash.Signature, 8)
	if k := AppendBandKeys(nil, same, 2, 4); k[0] == k[1] {
		t.Fatal("two bands with equal values share a key")
	}
	// A pair of values is not the same as a lone value, nor is the order irrelevant.
	if bandKey(0, []uint32{1, 2}) == bandKey(0, []uint32{2, 1}) || bandKey(0, []uint32{5}) == bandKey(0, []uint32{5, 0}) {
		t.Fatal("band keys collide on reordered or extended values")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("AppendBandKeys with too many rows did not panic")
		}
	}()
	AppendBandKeys(nil, a, 10, 13)
}
