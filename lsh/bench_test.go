package lsh

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/neardup/neardup/minhash"
)

// benchIndex is the index of BenchmarkQuery, built once per size: n random signatures of
// K = 128 where one in a hundred is a near copy (similarity about 0.9) of an earlier one.
var benchIndex struct {
	sync.Mutex
	x    map[int]*Index
	sigs map[int][]minhash.Signature
}

func buildBenchIndex(b *testing.B, n int) (*Index, []minhash.Signature) {
	benchIndex.Lock()
	defer benchIndex.Unlock()
	if x := benchIndex.x[n]; x != nil {
		return x, benchIndex.sigs[n]
	}
	r := rand.New(rand.NewPCG(1, uint64(n)))
	x := mustNew(b, Options{})
	sigs := make([]minhash.Signature, 0, n)
	for id := range uint64(n) {
		var s minhash.Signature
		if id > 0 && r.IntN(100) == 0 {
			s = mutate(r, sigs[r.IntN(len(sigs))], 0.1)
		} else {
			s = randomSig(r, 128)
		}
		sigs = append(sigs, s)
		if err := x.Add(id, s); err != nil {
			b.Fatal(err)
		}
	}
	if benchIndex.x == nil {
		benchIndex.x, benchIndex.sigs = map[int]*Index{}, map[int][]minhash.Signature{}
	}
	benchIndex.x[n], benchIndex.sigs[n] = x, sigs
	return x, sigs
}

// BenchmarkQuery measures AppendQuery at the default options (threshold 0.8, 9 bands of
// 13 rows) on an index of 1M signatures (10k with -short): "indexed" queries an indexed
// signature (at least one match), "near" a fresh near copy of one (similarity about 0.9),
// "random" a signature matching nothing. It reports queries/s and the index's bytes per
// signature.
func BenchmarkQuery(b *testing.B) {
	n := 1_000_000
	if testing.Short() {
		n = 10_000
	}
	x, sigs := buildBenchIndex(b, n)
	r := rand.New(rand.NewPCG(2, 2))
	const nq = 1024
	queries := map[string][]minhash.Signature{}
	for range nq {
		s := sigs[r.IntN(len(sigs))]
		queries["indexed"] = append(queries["indexed"], s)
		queries["near"] = append(queries["near"], mutate(r, s, 0.1))
		queries["random"] = append(queries["random"], randomSig(r, 128))
	}
	perDoc := float64(x.MemoryUsage()) / float64(x.Len())
	for _, kind := range []string{"indexed", "near", "random"} {
		qs := queries[kind]
		b.Run(fmt.Sprintf("%s/n=%d", kind, n), func(b *testing.B) {
			b.ReportAllocs()
			dst := make([]Match, 0, 64)
			found, i := 0, 0
			for b.Loop() {
				dst, _ = x.AppendQuery(dst[:0], qs[i%nq])
				found += len(dst)
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
			b.ReportMetric(float64(found)/float64(b.N), "matches/query")
			b.ReportMetric(perDoc, "bytes/doc")
		})
	}
}

// BenchmarkAdd measures adding signatures to a growing index, rebuilds included.
func BenchmarkAdd(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	sigs := make([]minhash.Signature, 4096)
	for i := range sigs {
		sigs[i] = randomSig(r, 128)
	}
	x := mustNew(b, Options{})
	id := uint64(0)
	for b.Loop() {
		if err := x.Add(id, sigs[id%4096]); err != nil {
			b.Fatal(err)
		}
		id++
	}
}

func BenchmarkBandKeys(b *testing.B) {
	sig := randomSig(rand.New(rand.NewPCG(4, 4)), 128)
	dst := make([]uint64, 0, DefaultBands)
	b.SetBytes(4 * DefaultBands * DefaultRows)
	for b.Loop() {
		dst = AppendBandKeys(dst[:0], sig, DefaultBands, DefaultRows)
	}
}
