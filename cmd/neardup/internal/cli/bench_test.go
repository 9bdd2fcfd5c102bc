package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/neardup/neardup/cmd/neardup/internal/bench"
)

func TestBenchFindall(t *testing.T) {
	stdout, stderr, code := run(t, "", "bench", "findall", "--random", "20000", "--plant", "0.05", "--distance", "3", "--json", "--repeat", "2")
	if code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	var res bench.FindallResult
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
