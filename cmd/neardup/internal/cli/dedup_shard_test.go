package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/internal/redistest"
)

// shardChildArgs, in a child's environment, are the arguments (a JSON array) of the
// 'neardup' the child runs in place of TestDedupShardChild.
const shardChildArgs = "NEARDUP_TEST_SHARD_ARGS"

// TestDedupShardChild is not a test: it is the process TestDedupShards starts for each
// shard, running Main with the arguments it is given.
func TestDedupShardChild(t *testing.T) {
	args := os.Getenv(shardChildArgs)
	if args == "" {
		t.Skip("run by TestDedupShards")
	}
	var list []string
	if err := json.Unmarshal([]byte(args), &list); err != nil {
		t.Fatal(err)
	}
	os.Exit(Main(list, strings.NewReader(""), os.Stdout, os.Stderr))
}

// shardCorpus writes a corpus as files JSONL files: a dense cloud (pairs spread around
// the threshold), exact copies in other case, and a bad line, the copies falling in other
// files than their originals.
func shardCorpus(t *testing.T, dir string, n, files int) []string {
	cloud, _ := evaldata.DenseCloud(3, n, 1)
	bufs := make([]bytes.Buffer, files)
	line := func(k int, id, text string) {
		b, _ := json.Marshal(map[string]string{"id": id, "text": text})
		bufs[k%files].Write(append(b, '\n'))
	}
	for i, d := range cloud {
		line(i*7, d.ID, d.Text)
		if i%4 == 1 {
			line(i*7+3, d.ID+"-copy", strings.ToUpper(d.Text))
		}
	}
	bufs[1].WriteString("{not json\n")
	var paths []string
	for k := range bufs {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.jsonl", k))
		if err := os.WriteFile(p, bufs[k].Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// startShard starts 'neardup dedup' with args in a process of its own.
func startShard(t *testing.T, args []string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestDedupShardChild$")
	list, _ := json.Marshal(append([]string{"dedup"}, args...))
	cmd.Env = append(os.Environ(), shardChildArgs+"="+string(list))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stderr
}

// TestDedupShards runs three 'neardup dedup --shard' processes against a real Redis
// Cluster, started last shard first and some time apart, merges their parts, and checks
// the lists byte for byte against one 'neardup dedup' over the same inputs; then the
// errors a user meets.
func TestDedupShards(t *testing.T) {
	c := redistest.Start(t)
	dir := t.TempDir()
	inputs := shardCorpus(t, dir, 240, 7)
	single := filepath.Join(dir, "single")
	if _, stderr, code := run(t, "", append([]string{"dedup", "--quiet", "--no-corpus", "--out", single}, inputs...)...); code != ExitOK {
		t.Fatalf("single run: %d\n%s", code, stderr)
	}
	var dirs []string
	var cmds []*exec.Cmd
	var logs []*bytes.Buffer
	for i := 2; i >= 0; i-- {
		d := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
		dirs = append(dirs, d)
		cmd, log := startShard(t, append([]string{"--quiet", "--shard", fmt.Sprintf("%d/3", i), "--run", "cli",
			"--redis", c.URL(), "--redis-prefix", "t", "--out", d}, inputs...))
		cmds, logs = append(cmds, cmd), append(logs, log)
		time.Sleep(300 * time.Millisecond)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("shard %s: %v\n%s", dirs[i], err, logs[i])
		}
	}
	merged := filepath.Join(dir, "merged")
	// The merge authenticates with --redis-user and --redis-password: the test cluster has
	// no such user, so Redis refuses them, and the merge writes its results but says the
	// keys stay.
	_, stderr, code := run(t, "", append([]string{"dedup", "merge", "--quiet", "--redis", c.URL(), "--redis-prefix", "t",
		"--redis-user", "nobody", "--redis-password", "wrong", "--out", merged}, dirs...)...)
	if code == ExitOK || !strings.Contains(stderr, "the run's keys stay") || !strings.Contains(stderr, "WRONGPASS") {
		t.Fatalf("merge with a wrong --redis-password: %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, "", append([]string{"dedup", "merge", "--quiet", "--redis", c.URL(), "--redis-prefix", "t", "--force", "--out", merged}, dirs...)...); code != ExitOK {
		t.Fatalf("merge: %d\n%s", code, stderr)
	}
	for _, f := range []string{"keep.txt", "drop.txt", "pairs.jsonl", "clusters.jsonl", "bad.jsonl"} {
		want, err1 := os.ReadFile(filepath.Join(single, f))
		got, err2 := os.ReadFile(filepath.Join(merged, f))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if f == "pairs.jsonl" && (!bytes.Contains(want, []byte(`"minhash"`)) || !bytes.Contains(want, []byte(`"exact"`))) {
			t.Fatalf("the corpus lacks near or exact pairs:\n%.300s", want)
		}
		if f == "bad.jsonl" { // in shard order, not input order
			want, got = sortedLines(want), sortedLines(got)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the single run's:\n got %.300s\nwant %.300s", f, got, want)
		}
	}

	// The merge removed the run's keys.
	for _, a := range c.Addrs {
		if out, err := exec.Command("redis-cli", "-u", "redis://"+a, "--scan", "--pattern", "t:cli:*").Output(); err != nil || len(out) != 0 {
			t.Errorf("%s holds keys of the merged run: %v %.200s", a, err, out)
		}
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"shard missing", append([]string{"dedup", "merge", "--out", filepath.Join(dir, "m2")}, dirs[:2]...), "shard 0 of the 3 of run \"cli\" not given"},
		{"not a shard", []string{"dedup", "merge", "--out", filepath.Join(dir, "m3"), inputs[0]}, "not a valid shard file"},
		{"no run", append([]string{"dedup", "--shard", "0/2", "--redis", c.URL(), "--out", filepath.Join(dir, "x")}, inputs...), "--shard needs --run NAME"},
		{"bad shard", append([]string{"dedup", "--shard", "2/2", "--run", "x", "--redis", c.URL(), "--out", filepath.Join(dir, "x")}, inputs...), "give I/N with 0 <= I < N"},
		{"simhash", append([]string{"dedup", "--method", "simhash", "--shard", "0/2", "--run", "x", "--redis", c.URL(), "--out", filepath.Join(dir, "x")}, inputs...), "cannot be sharded yet"},
		{"unreachable", append([]string{"dedup", "--shard", "0/2", "--run", "x", "--redis", "redis://127.0.0.1:1", "--out", filepath.Join(dir, "x")}, inputs...), "cannot reach the Redis Cluster at 127.0.0.1:1"},
	} {
		_, stderr, code := run(t, "", tc.args...)
		if code == ExitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %q", tc.name, code, stderr, tc.want)
		}
	}
}

func sortedLines(b []byte) []byte {
	lines := strings.SplitAfter(string(b), "\n")
	slices.Sort(lines)
	return []byte(strings.Join(lines, ""))
}
