package cli

import (
	"encoding/json"
	"math/bits"
	"slices"
	"strings"
	"testing"
)

func TestBenchFindall(t *testing.T) {
	stdout, stderr, code := run(t, "", "bench", "findall", "--random", "20000", "--plant", "0.05", "--distance", "3", "--json", "--repeat", "2")
	if code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var res benchResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %q", err, stdout)
	}
	if res.N != 20000 || res.Planted != 1000 || res.Distance != 3 || !res.Auto || res.Blocks < 4 || res.Seed != 1 || res.Repeat != 2 {
		t.Errorf("report %+v", res)
	}
	if res.PlantedPairs < 990 || res.PlantedRecovered != res.PlantedPairs || res.Recall == nil || *res.Recall != 1 {
		t.Errorf("planted pairs %d, recovered %d, recall %v; want full recall", res.PlantedPairs, res.PlantedRecovered, res.Recall)
	}
	if res.Pairs < res.PlantedPairs || res.Seconds <= 0 || res.Threads < 1 {
		t.Errorf("report %+v", res)
	}
	for _, s := range []string{"21000 fingerprints: 20000 random + 1000 planted copies", "(automatic), distance 3", "recall 1.0000", "best of 2"} {
		if !strings.Contains(stderr, s) {
			t.Errorf("report on stderr does not contain %q:\n%s", s, stderr)
		}
	}

	// Without --json the report goes to stdout; a given design is reported as given.
	stdout, stderr, code = run(t, "", "bench", "findall", "--random", "5000", "--distance", "2", "--blocks", "5", "--seed", "7")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	for _, s := range []string{"5000 fingerprints: 5000 random + 0 planted", "seed 7", "5 blocks (given), distance 2, 10 tables", "no planted pairs"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("report does not contain %q:\n%s", s, stdout)
		}
	}
}

func TestBenchFindallErrors(t *testing.T) {
	tests := []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"--distance", "3"}, ExitUsage, "--random is required"},
		{[]string{"--random", "-5", "--distance", "3"}, ExitUsage, "--random -5 is out of range; use 1 to 2147483648"},
		{[]string{"--random", "2147483649", "--distance", "3"}, ExitUsage, "--random 2147483649 is out of range"},
		{[]string{"--random", "10"}, ExitUsage, "--distance is required"},
		{[]string{"--random", "10", "--distance", "0"}, ExitUsage, "--distance 0 finds nothing"},
		{[]string{"--random", "10", "--distance", "3", "--blocks", "2"}, ExitUsage, "hamming: invalid table design: 2 blocks"},
		{[]string{"--random", "10", "--distance", "3", "--plant", "1.5"}, ExitUsage, "--plant 1.5 is not a rate"},
		{[]string{"--random", "10", "--distance", "3", "--plant", "NaN"}, ExitUsage, "--plant NaN is not a rate"},
		{[]string{"--random", "10", "--distance", "3", "--repeat", "0"}, ExitUsage, "--repeat 0"},
		{[]string{"--random", "10", "--distance", "3", "file.txt"}, ExitUsage, `unexpected argument "file.txt"`},
	}
	for _, tt := range tests {
		stdout, stderr, code := run(t, "", append([]string{"bench", "findall"}, tt.args...)...)
		if code != tt.code || !strings.Contains(stderr, "neardup bench findall: "+tt.err) || stdout != "" {
			t.Errorf("%q: exit code %d, stderr %q, stdout %q; want %d and %q", tt.args, code, stderr, stdout, tt.code, tt.err)
		}
	}
}

func TestPlantedWorkload(t *testing.T) {
	for _, k := range []int{1, 3, 8} {
		fps, planted := plantedWorkload(1000, 0.3, k, 42)
		if len(fps) != 1300 {
			t.Fatalf("k %d: %d fingerprints, want 1300", k, len(fps))
		}
		again, _ := plantedWorkload(1000, 0.3, k, 42)
		if !slices.Equal(fps, again) {
			t.Errorf("k %d: the same seed gives different fingerprints", k)
		}
		other, _ := plantedWorkload(1000, 0.3, k, 43)
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
