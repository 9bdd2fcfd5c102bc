package bench

import (
	"math/bits"
	"slices"
	"testing"
)

func TestPlantedWorkload(t *testing.T) {
	for _, k := range []int{1, 3, 8} {
		fps, planted := PlantedWorkload(1000, 0.3, k, 42)
		if len(fps) != 1300 {
			t.Fatalf("k %d: %d fingerprints, want 1300", k, len(fps))
		}
		again, _ := PlantedWorkload(1000, 0.3, k, 42)
		if !slices.Equal(fps, again) {
			t.Errorf("k %d: the same seed gives different fingerprints", k)
		}
		other, _ := PlantedWorkload(1000, 0.3, k, 43)
		if slices.Equal(fps, other) {
			t.Errorf("k %d: seeds 42 and 43 give the same fingerprints", k)
		}
		sorted := slices.Sorted(slices.Values(fps))
		seen := make([]bool, k+1)
		for i, p := range planted {
			d := bits.OnesCount64(p.A ^ p.B)
			if p.A >= p.B || d < 1 || d > k {
				t.Fatalf("k %d: planted pair %x at distance %d", k, p, d)
			}
			seen[d] = true
			if i > 0 && comparePairs(planted[i-1], p) >= 0 {
				t.Fatalf("k %d: planted pairs not sorted and distinct", k)
			}
			for _, v := range []uint64{p.A, p.B} {
				if _, ok := slices.BinarySearch(sorted, v); !ok {
					t.Fatalf("k %d: planted value %x not in the input", k, v)
				}
			}
		}
		for d := 1; d <= k; d++ {
			if !seen[d] {
				t.Errorf("k %d: no planted pair at distance %d", k, d)
			}
		}
	}
}

// TestFindall: the search is exact, so every planted pair is recovered, and the auto
// design is reported as the one hamming chose.
func TestFindall(t *testing.T) {
	res, err := Findall(FindallOptions{N: 5000, Plant: 0.05, Distance: 3, Repeat: 2, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if res.Recall == nil || *res.Recall != 1 || res.PlantedRecovered != res.PlantedPairs || res.Pairs < res.PlantedPairs || res.Planted != 250 {
		t.Errorf("result %+v", res)
	}
	if !res.Auto || res.Blocks < 4 || res.Seconds <= 0 {
		t.Errorf("design %d blocks (auto %v), %v s", res.Blocks, res.Auto, res.Seconds)
	}
	none, err := Findall(FindallOptions{N: 100, Distance: 2, Blocks: 4, Repeat: 1})
	if err != nil || none.Recall != nil || none.Auto || none.Blocks != 4 {
		t.Errorf("no planted pairs: %+v, %v", none, err)
	}
}
