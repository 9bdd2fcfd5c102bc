package hamming

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// bruteFindAll is the oracle: every pair of distinct values within k bits, sorted.
func bruteFindAll(fps []uint64, k int) []Pair {
	vals := slices.Clone(fps)
	slices.Sort(vals)
	vals = slices.Compact(vals)
	var out []Pair
	if k == 0 {
		return nil
	}
	for i, a := range vals {
		for _, b := range vals[i+1:] {
			if bits.OnesCount64(a^b) <= k {
				out = append(out, Pair{a, b})
			}
		}
	}
	return out
}

// planted returns n random fingerprints plus, for a share rate of them, copies with 1 to
// maxFlip random bits flipped, shuffled: the reference workload of the performance goals.
func planted(r *rand.Rand, n int, rate float64, maxFlip int) []uint64 {
	fps := make([]uint64, 0, n+int(float64(n)*rate)+n/100+1)
	for range n {
		fps = append(fps, r.Uint64())
	}
	for range int(float64(n) * rate) {
		v := fps[r.IntN(n)]
		for range 1 + r.IntN(maxFlip) {
			v ^= 1 << r.IntN(64)
		}
		fps = append(fps, v)
	}
	r.Shuffle(len(fps), func(i, j int) { fps[i], fps[j] = fps[j], fps[i] })
	return fps
}

// clustered returns fingerprints that share most bits, so that many land in the same
// partitions and collide in the hashed keys.
func clustered(r *rand.Rand, n int) []uint64 {
	base := r.Uint64()
	fps := make([]uint64, n)
	for i := range fps {
		v := base
		for range r.IntN(7) {
			v ^= 1 << r.IntN(64)
		}
		fps[i] = v
	}
	return fps
}

func TestFindAllUpstreamSets(t *testing.T) {
	basic := []uint64{
		0x000000FF, 0x000000EF, 0x000000EE, 0x000000CE, 0x00000033,
		0x0000FF00, 0x0000EF00, 0x0000EE00, 0x0000CE00, 0x00003300,
		0x00FF0000, 0x00EF0000, 0x00EE0000, 0x00CE0000, 0x00330000,
		0xFF000000, 0xEF000000, 0xEE000000, 0xCE000000, 0x33000000,
	}
	diverse := []uint64{
		0x00000000, 0x10101000, 0x10100010, 0x10001010, 0x00101010,
		0x01010100, 0x01010001, 0x01000101, 0x00010101,
	}
	for name, set := range map[string][]uint64{"basic": basic, "diverse": diverse} {
		want := bruteFindAll(set, 3)
		if name == "basic" && len(want) != 24 || name == "diverse" && len(want) != 20 {
			t.Fatalf("%s: oracle found %d pairs", name, len(want))
		}
		for blocks := 4; blocks < 10; blocks++ {
			got, err := FindAll(set, blocks, 3)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s blocks %d: got %x, want %x", name, blocks, got, want)
			}
		}
	}
}

func TestFindAllMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	repeats := planted(r, 1000, 0.1, 3)
	for i := range 300 {
		repeats = append(repeats, repeats[i*2])
	}
	sets := map[string][]uint64{
		"repeats":   repeats,
		"empty":     nil,
		"one":       {42},
		"equal":     {7, 7, 7},
		"planted":   planted(r, 3000, 0.2, 4),
		"clustered": clustered(r, 1500),
		"small":     planted(r, 40, 0.5, 3),
	}
	for name, fps := range sets {
		for k := 0; k <= 5; k++ {
			want := bruteFindAll(fps, k)
			for _, blocks := range []int{0, k + 1, k + 2, k + 4, 2*k + 3, 16, 64} {
				if blocks != 0 && (blocks <= k || tables(blocks, k) > 2000) {
					continue
				}
				for _, threads := range []int{1, 2, 3} {
					f := Finder{Distance: k, Blocks: blocks, Threads: threads}
					got, err := f.FindAll(fps)
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(got, want) {
						t.Fatalf("%s k=%d blocks=%d threads=%d: got %d pairs, want %d", name, k, blocks, threads, len(got), len(want))
					}
				}
			}
		}
	}
}

func TestFindAllLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 20k fingerprints is slow under -short")
	}
	r := rand.New(rand.NewPCG(3, 4))
	fps := planted(r, 20000, 0.05, 3)
	want := bruteFindAll(fps, 3)
	for _, blocks := range []int{0, 4, 5, 6, 7} {
		got, err := FindAll(fps, blocks, 3)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("blocks=%d: got %d pairs, want %d", blocks, len(got), len(want))
		}
	}
}

func TestFindAllDesignErrors(t *testing.T) {
	for _, c := range []struct{ blocks, k int }{{65, 3}, {3, 3}, {2, 3}, {4, -1}, {0, -1}, {1000, 3}} {
		_, err := FindAll([]uint64{1, 2, 3}, c.blocks, c.k)
		if !errors.Is(err, ErrDesign) {
			t.Errorf("blocks=%d k=%d: err = %v, want ErrDesign", c.blocks, c.k, err)
		}
	}
	if got, err := FindAll([]uint64{1, 3, 7}, 4, 0); err != nil || got != nil {
		t.Errorf("k=0: got %v, %v; want nothing", got, err)
	}
}

func TestFindAllDocs(t *testing.T) {
	fps := []uint64{0xF0, 0xF1, 0xF0, 0x0F0F0F0F0F0F0F0F, 0xF0, 0xF3, 0x0F0F0F0F0F0F0F0F}
	got, err := Finder{Distance: 1}.FindAllDocs(fps)
	if err != nil {
		t.Fatal(err)
	}
	want := []DocPair{{0, 1, 1}, {0, 2, 0}, {0, 4, 0}, {1, 5, 1}, {3, 6, 0}}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// The components equal those of every pair listed.
	r := rand.New(rand.NewPCG(5, 6))
	fps = planted(r, 500, 0.3, 3)
	for i := range 100 {
		fps = append(fps, fps[i*3])
	}
	pairs, err := Finder{Distance: 3}.FindAllDocs(fps)
	if err != nil {
		t.Fatal(err)
	}
	var all []DocPair
	for i := range fps {
		for j := i + 1; j < len(fps); j++ {
			if d := bits.OnesCount64(fps[i] ^ fps[j]); d <= 3 {
				all = append(all, DocPair{i, j, d})
			}
		}
	}
	if a, b := fmt.Sprint(ClusterDocs(len(fps), pairs, ClusterOptions{})), fmt.Sprint(ClusterDocs(len(fps), all, ClusterOptions{})); a != b {
		t.Errorf("components differ:\n%s\n%s", a, b)
	}
	for _, p := range pairs {
		if p.A >= p.B || p.Distance != bits.OnesCount64(fps[p.A]^fps[p.B]) {
			t.Fatalf("bad pair %v", p)
		}
	}
}

func TestAutoBlocks(t *testing.T) {
	prev := 0
	for _, n := range []int{0, 1000, 100_000, 1_000_000, 10_000_000, 100_000_000} {
		m := AutoBlocks(n, 3)
		if m <= 3 || m > 64 || m < prev {
			t.Errorf("AutoBlocks(%d, 3) = %d after %d", n, m, prev)
		}
		prev = m
	}
	for k := range 64 {
		if m := AutoBlocks(1_000_000, k); m <= k || m > 64 {
			t.Errorf("AutoBlocks(1M, %d) = %d", k, m)
		}
	}
}

func BenchmarkFindAll(b *testing.B) {
	sizes := []int{100_000, 1_000_000}
	if !testing.Short() {
		sizes = append(sizes, 4_000_000)
	}
	for _, n := range sizes {
		fps := planted(rand.New(rand.NewPCG(7, uint64(n))), n, 0.01, 3)
		for _, blocks := range []int{0, 4, 5, 6} {
			for _, threads := range []int{1, 2} {
				b.Run(fmt.Sprintf("n=%d/blocks=%d/threads=%d", n, blocks, threads), func(b *testing.B) {
					b.SetBytes(int64(len(fps)) * 8)
					b.ReportAllocs()
					f := Finder{Distance: 3, Blocks: blocks, Threads: threads}
					for b.Loop() {
						if _, err := f.FindAll(fps); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

func TestFindAllRepeatedValues(t *testing.T) {
	// A million copies of a handful of values must stay linear, not quadratic.
	fps := make([]uint64, 1_000_000)
	for i := range fps {
		fps[i] = uint64(i%4) << 60
	}
	for _, blocks := range []int{0, 4, 5, 8} {
		got, err := FindAll(fps, blocks, 3)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteFindAll(fps[:4], 3)
		if len(want) != 6 || !slices.Equal(got, want) {
			t.Errorf("blocks=%d: got %x, want %x", blocks, got, want)
		}
	}
}

// TestGrouperStampWraps checks that a grouper whose stamp is about to pass the largest
// uint32 starts afresh and finds the same pairs as a new one, table after table.
func TestGrouperStampWraps(t *testing.T) {
	d, err := newDesign(5, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 9))
	part := planted(r, 300, 0.2, 3)
	fresh := &grouper{d: d}
	worn := &grouper{d: d, stamp: math.MaxUint32 - 500}
	for range 3 {
		for tb := range d.perms {
			fresh.table(part, tb)
			worn.table(part, tb)
		}
	}
	if len(fresh.out) == 0 || !slices.Equal(fresh.out, worn.out) {
		t.Errorf("%d pairs from a new grouper, %d from one whose stamp wrapped", len(fresh.out), len(worn.out))
	}
	if worn.stamp >= math.MaxUint32-500 {
		t.Errorf("the stamp did not wrap: %d", worn.stamp)
	}
}
