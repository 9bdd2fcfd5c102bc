package bench

import (
	"cmp"
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"time"

	"github.com/neardup/neardup/hamming"
	"github.com/neardup/neardup/internal/procstat"
)

// FindallOptions describe a find-all benchmark: N random fingerprints plus
// round(N*Plant) planted near copies of 1 to Distance flipped bits, searched with a
// hamming.Finder of Distance, Blocks (0: automatic) and Threads, Repeat times.
type FindallOptions struct {
	N        int
	Plant    float64
	Distance int
	Blocks   int
	Threads  int
	Repeat   int
	Seed     uint64
}

// FindallResult is what a find-all benchmark measured, as `neardup bench findall --json`
// writes it.
type FindallResult struct {
	N                int      `json:"n"`
	Planted          int      `json:"planted"`
	Blocks           int      `json:"blocks"`
	Auto             bool     `json:"auto"`
	Distance         int      `json:"distance"`
	Threads          int      `json:"threads"`
	Seconds          float64  `json:"seconds"` // the best of Repeat runs
	Pairs            int      `json:"pairs"`
	PlantedRecovered int      `json:"planted_recovered"`
	PlantedPairs     int      `json:"planted_pairs"`
	Recall           *float64 `json:"recall"` // null when no pair was planted
	PeakRSSBytes     uint64   `json:"peak_rss_bytes"`
	Seed             uint64   `json:"seed"`
	Repeat           int      `json:"repeat"`
}

// Findall generates the workload of o, times the search alone (not the generation)
// Repeat times, and returns the best time with the pairs found and how many of the
// planted pairs were among them. Threads in the result is as given (0 for automatic).
func Findall(o FindallOptions) (FindallResult, error) {
	fps, planted := PlantedWorkload(o.N, o.Plant, o.Distance, o.Seed)
	f := hamming.Finder{Distance: o.Distance, Blocks: o.Blocks, Threads: o.Threads}
	var pairs []hamming.Pair
	best := time.Duration(math.MaxInt64)
	for range o.Repeat {
		runtime.GC() // start each run from the same heap (the last run's pairs are dead here)
		start := time.Now()
		var err error
		pairs, err = f.FindAll(fps)
		if err != nil {
			return FindallResult{}, err
		}
		best = min(best, time.Since(start))
	}
	res := FindallResult{
		N: o.N, Planted: len(fps) - o.N, Blocks: o.Blocks, Auto: o.Blocks == 0, Distance: o.Distance,
		Threads: o.Threads, Seconds: best.Seconds(), Pairs: len(pairs), PlantedPairs: len(planted),
		PeakRSSBytes: procstat.PeakRSS(), Seed: o.Seed, Repeat: o.Repeat,
	}
	if res.Auto {
		res.Blocks = hamming.AutoBlocks(len(fps), o.Distance)
	}
	for _, p := range planted {
		if _, ok := slices.BinarySearchFunc(pairs, p, comparePairs); ok {
			res.PlantedRecovered++
		}
	}
	if len(planted) > 0 {
		r := float64(res.PlantedRecovered) / float64(len(planted))
		res.Recall = &r
	}
	return res, nil
}

func comparePairs(a, b hamming.Pair) int {
	if c := cmp.Compare(a.A, b.A); c != 0 {
		return c
	}
	return cmp.Compare(a.B, b.B)
}

// PlantedWorkload returns n random fingerprints and round(n*rate) near copies of random
// ones among them, each with 1 to k distinct bits flipped (the count uniform in 1..k),
// shuffled; and the distinct (original, copy) pairs, smaller value first, sorted. The
// generator is math/rand/v2's PCG seeded with (seed, 0), so a seed always gives the same
// input, as simhash-py's bench.py workload does for its own generator.
func PlantedWorkload(n int, rate float64, k int, seed uint64) (fps []uint64, planted []hamming.Pair) {
	r := rand.New(rand.NewPCG(seed, 0))
	copies := int(math.Round(float64(n) * rate))
	fps = make([]uint64, n, n+copies)
	for i := range fps {
		fps[i] = r.Uint64()
	}
	planted = make([]hamming.Pair, 0, copies)
	for range copies {
		orig := fps[r.IntN(n)]
		flips := 1 + r.IntN(k)
		var mask uint64
		for bits.OnesCount64(mask) < flips {
			mask |= 1 << r.IntN(64)
		}
		cp := orig ^ mask
		fps = append(fps, cp)
		planted = append(planted, hamming.Pair{A: min(orig, cp), B: max(orig, cp)})
	}
	r.Shuffle(len(fps), func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
	slices.SortFunc(planted, comparePairs)
	return fps, slices.Compact(planted)
}
