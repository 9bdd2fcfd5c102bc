package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/neardup/neardup/internal/testtool"
)

// TestBenchServiceEmit: --emit writes one body a line, the documents or queries a run
// would send, and a wrk script; run by wrk, the script sends each body once, in order,
// and stops wrk when they run out.
func TestBenchServiceEmit(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "adds.jsonl")
	stdout, stderr, code := run(t, "", "bench", "service", "--emit", file, "--requests", "50", "--start", "700", "--clients", "1", "--token", "s3cret")
	if code != ExitOK {
		t.Fatalf("exit code %d: %s", code, stderr)
	}
	for _, s := range []string{"wrote 50 request bodies for POST /v1/documents", "doc-700 to doc-749", "next --start 750", "wrk -t1 -c1 -d60s --latency -s " + file + ".lua"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 50 || !strings.HasPrefix(lines[0], `{"id":"doc-700",`) || !strings.HasPrefix(lines[49], `{"id":"doc-749",`) {
		t.Fatalf("%d lines, first %.40q, last %.40q", len(lines), lines[0], lines[len(lines)-1])
	}
	if fi, err := os.Stat(file + ".lua"); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the script, which holds the token: %v, %v", fi, err)
	}

	// Batched queries: a line is one request's body.
	qfile := filepath.Join(dir, "queries.jsonl")
	stdout, stderr, code = run(t, "", "bench", "service", "--emit", qfile, "--requests", "4", "--mode", "query", "--batch", "3")
	if code != ExitOK || !strings.Contains(stdout, "wrote 4 request bodies for POST /v1/fingerprints/query:batch") ||
		!strings.Contains(stdout, "queries of documents doc-0 to doc-11") {
		t.Fatalf("exit code %d: %s%s", code, stdout, stderr)
	}
	data, _ = os.ReadFile(qfile)
	if n := bytes.Count(data, []byte("\n")); n != 4 || bytes.Count(data, []byte(`"simhash"`)) != 12 {
		t.Errorf("%d lines, %d queries", n, bytes.Count(data, []byte(`"simhash"`)))
	}

	for _, args := range [][]string{
		{"--emit", file}, // no --requests
		{"--emit", file, "--requests", "5", "--mode", "mixed"},   // two kinds
		{"--emit", file, "--requests", "5", "--duration", "10s"}, // a sending flag
	} {
		if _, stderr, code := run(t, "", append([]string{"bench", "service"}, args...)...); code != ExitUsage {
			t.Errorf("%q: exit code %d, want %d: %s", args, code, ExitUsage, stderr)
		}
	}

	// The script, run by wrk against a service that records what it gets.
	wrk := testtool.Path(t, "wrk")
	f := &fakeService{token: "s3cret"}
	addr := f.start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, wrk, "-t1", "-c1", "-d30s", "-s", file+".lua", addr).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !bytes.Contains(out, []byte("ran out; emit more")) {
		t.Fatalf("wrk: %v, want exit status 1 when the bodies run out:\n%s", err, out)
	}
	var want []string
	for i := 700; i < 750; i++ {
		want = append(want, "doc-"+strconv.Itoa(i))
	}
	// Under the lock: the wrk -t2 run below may still send a request (its first thread
	// starts before the second's setup stops it), which the service counts meanwhile.
	f.mu.Lock()
	if f.counts["/v1/documents"] != 50 || len(f.counts) != 1 || len(f.bad) > 0 || !slices.Equal(f.ids, want) {
		t.Errorf("the service saw %v, ids %q, bad %q", f.counts, f.ids, f.bad)
	}
	f.mu.Unlock()

	// A second wrk thread would send every body again: the script refuses it.
	out, err = exec.CommandContext(ctx, wrk, "-t2", "-c2", "-d30s", "-s", file+".lua", addr).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !bytes.Contains(out, []byte("one wrk thread")) {
		t.Errorf("wrk -t2: %v, want exit status 2:\n%s", err, out)
	}
}
