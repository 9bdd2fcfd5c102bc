package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/store"
)

// syncBuffer is a bytes.Buffer safe for the logger and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs "neardup serve" with args and the environment until the returned
// function is called, which returns serve's error.
func startServe(t *testing.T, environ map[string]string, args ...string) (base string, stop func() error, logs *syncBuffer) {
	t.Helper()
	c := &serveCmd{}
	fs := newFlagSet(serveCommand, c)
	pos, err := parseArgs(fs, args)
	if err != nil {
		t.Fatal(err)
	}
	logs = &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- c.serve(ctx, &env{stdout: io.Discard, stderr: logs}, pos,
			func(k string) string { return environ[k] }, func(a net.Addr) { addr <- a })
	}()
	select {
	case a := <-addr:
		base = "http://" + a.String()
	case err := <-done:
		// serve may listen and then fail at once (a store it refuses to open): then both
		// are ready, and the address it listened on says it started.
		select {
		case a := <-addr:
			base = "http://" + a.String()
			return base, func() error { cancel(); return err }, logs
		default:
		}
		cancel()
		t.Fatalf("serve: %v\n%s", err, logs)
	}
	return base, func() error { cancel(); return <-done }, logs
}

func TestServe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	tokens := filepath.Join(t.TempDir(), "tokens")
	os.WriteFile(tokens, []byte("# the crawler\nwrite w1\n"), 0o600)
	base, stop, logs := startServe(t, map[string]string{
		"NEARDUP_TOKENS": "read:r1", "NEARDUP_ADDR": "127.0.0.1:1", "NEARDUP_MAX_BATCH": "7", "NEARDUP_LOG_LEVEL": "debug",
	}, "--addr", "127.0.0.1:0", "--data", dir, "--tokens", tokens, "--log-format", "json")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := serveGet(t, base, "/readyz", ""); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready within 10 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Errorf("--data directory not created: %v", err)
	}
	req, _ := http.NewRequest("POST", base+"/v1/documents", strings.NewReader(`{"id":"a","text":"hello there world"}`))
	req.Header.Set("Authorization", "Bearer w1")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("add with the file's write token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	code, body := serveGet(t, base, "/v1/stats", "r1")
	var st struct {
		Documents int
		Store     struct{ Path, Kind string }
	}
	if code != 200 || json.Unmarshal([]byte(body), &st) != nil || st.Documents != 1 || st.Store.Path != dir || st.Store.Kind != "pebble" {
		t.Errorf("stats with NEARDUP_TOKENS's read token: %d %s", code, body)
	}
	if code, _ := serveGet(t, base, "/v1/stats", ""); code != 401 {
		t.Errorf("stats without a token: %d", code)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v", err)
	}
	out := logs.String()
	for _, want := range []string{`"msg":"listening"`, `"msg":"ready"`, `"msg":"request"`, `"msg":"stopped"`} {
		if !strings.Contains(out, want) {
			t.Errorf("logs lack %s:\n%s", want, out)
		}
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still answering after stopping")
	}

	// A restart on the same directory has the document, without adding it again.
	base, stop, logs = startServe(t, map[string]string{"NEARDUP_TOKENS": "read:r1"}, "--addr", "127.0.0.1:0", "--data", dir)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if code, _ := serveGet(t, base, "/readyz", ""); code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("not ready within 10 s after the restart")
		}
	}
	if code, body := serveGet(t, base, "/v1/documents/a", "r1"); code != 200 || !strings.Contains(body, `"id":"a"`) {
		t.Errorf("after the restart, document a: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve after the restart: %v\n%s", err, logs)
	}
}

// serveGet sends a GET for path to the service at base, with token if not empty, and
// returns the status and body.
func serveGet(t *testing.T, base, path, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestServeUsage(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--addr", "0.0.0.0:0"}, "--tokens"},
		{map[string]string{"NEARDUP_DISTANCE": "40"}, nil, "--distance 40"},
		{map[string]string{"NEARDUP_MAX_BODY": "lots"}, nil, "NEARDUP_MAX_BODY"},
		{nil, []string{"--log-format", "xml"}, "--log-format"},
		{map[string]string{"NEARDUP_TOKENS": "admin:x"}, nil, "NEARDUP_TOKENS"},
		{nil, []string{"--redis", "redis://127.0.0.1:1", "--redis-documents", "-5"}, "--redis-documents -5"},
	} {
		c := &serveCmd{}
		fs := newFlagSet(serveCommand, c)
		args := append([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
		pos, err := parseArgs(fs, args)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = c.serve(ctx, &env{stdout: io.Discard, stderr: io.Discard}, pos, func(k string) string { return tc.env[k] }, nil)
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("env %v args %q: %v, want an error naming %s", tc.env, tc.args, err, tc.want)
		}
	}
	// A flag on the command line wins over its environment variable.
	c := &serveCmd{}
	fs := newFlagSet(serveCommand, c)
	parseArgs(fs, []string{"--max-batch", "3"})
	if err := c.applyEnv(func(k string) string {
		return map[string]string{"NEARDUP_MAX_BATCH": "9", "NEARDUP_MAX_INFLIGHT": "5"}[k]
	}); err != nil {
		t.Fatal(err)
	}
	if c.maxBatch != 3 || c.maxInflight != 5 {
		t.Errorf("max-batch %d (flag 3, env 9), max-inflight %d (env 5)", c.maxBatch, c.maxInflight)
	}
}

// TestServeSizes reads the byte-size flags with units, from flags and the environment,
// and maps --band-memory 0 (no copy) to the detector's negative BandMemory.
func TestServeSizes(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		env        map[string]string
		cache, mem int64
	}{
		{nil, nil, 256 << 20, neardup.DefaultBandMemory},
		{[]string{"--cache-size", "2GiB", "--band-memory", "0"}, nil, 2 << 30, -1},
		{nil, map[string]string{"NEARDUP_CACHE_SIZE": "1048576", "NEARDUP_BAND_MEMORY": "1.5GiB"}, 1 << 20, 3 << 29},
	} {
		cfg, err := parseServe(t, tc.args, tc.env)
		if err != nil || cfg.cacheSize != tc.cache || cfg.opt.BandMemory != tc.mem {
			t.Errorf("%q %v: cache %d, band memory %d (%v); want %d, %d", tc.args, tc.env, cfg.cacheSize, cfg.opt.BandMemory, err, tc.cache, tc.mem)
		}
	}
}

// TestServePrescreenRefresh reads --prescreen-refresh, from the flag and the
// environment, into the detector's options, and refuses one that is not positive.
func TestServePrescreenRefresh(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{nil, nil, neardup.DefaultPrescreenRefresh},
		{[]string{"--prescreen-refresh", "5s"}, nil, 5 * time.Second},
		{nil, map[string]string{"NEARDUP_PRESCREEN_REFRESH": "2m"}, 2 * time.Minute},
		{[]string{"--prescreen-refresh", "0s"}, nil, 0},
	} {
		cfg, err := parseServe(t, tc.args, tc.env)
		if tc.want == 0 {
			if err == nil || !strings.Contains(err.Error(), "--prescreen-refresh") {
				t.Errorf("%q: %v, want an error naming --prescreen-refresh", tc.args, err)
			}
			continue
		}
		if err != nil || cfg.opt.PrescreenRefresh != tc.want {
			t.Errorf("%q %v: PrescreenRefresh %v (%v), want %v", tc.args, tc.env, cfg.opt.PrescreenRefresh, err, tc.want)
		}
	}
}

// parseServe returns serve's configuration from the arguments and the environment.
func parseServe(t *testing.T, args []string, env map[string]string) (serveConfig, error) {
	t.Helper()
	c := &serveCmd{}
	fs := newFlagSet(serveCommand, c)
	if _, err := parseArgs(fs, args); err != nil {
		t.Fatal(err)
	}
	if err := c.applyEnv(func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	return c.config()
}

// TestLogBandMoves checks the log lines of a move of the band postings to the store: a
// detector whose band copy is the smallest there is outgrows it after a few hundred
// documents.
func TestLogBandMoves(t *testing.T) {
	d, err := neardup.OpenDetector(store.NewMemory(), neardup.Options{BandMemory: 128 << 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := d.BandPostings(); got != "memory" {
		t.Fatalf("a new detector's band postings are in %q, want memory", got)
	}
	var out syncBuffer
	log := slog.New(slog.NewTextHandler(&out, nil))
	done := make(chan struct{})
	go func() {
		defer close(done)
		logBandMoves(t.Context(), log, d, time.Millisecond)
	}()
	for i := 0; d.BandPostings() != "store"; i++ {
		if i == 5000 {
			t.Fatal("5000 documents and the band postings are not in the store")
		}
		text := strings.Repeat(fmt.Sprintf("word%d other%d ", i, i*7), 40)
		if _, err := d.Check(neardup.Document{ID: fmt.Sprint(i), Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("logBandMoves did not return once the postings were in the store")
	}
	got := out.String()
	if !strings.Contains(got, "level=INFO") || !strings.Contains(got, "the band postings are in the store") {
		t.Errorf("log:\n%s\nwant the line that the band postings are in the store", got)
	}
}

// TestServeLimits: --max-bytes exists and its 400 names it; --body-memory and
// --max-conns default from --memory-limit and the open files limit; bad values are
// usage errors.
func TestServeLimits(t *testing.T) {
	base, stop, logs := startServe(t, nil, "--addr", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data"), "--max-bytes", "1000")
	defer func() {
		if err := stop(); err != nil {
			t.Errorf("stop: %v\n%s", err, logs)
		}
	}()
	waitReady(t, base)
	page, _ := json.Marshal(map[string]string{"id": "big", "html": "<p>" + strings.Repeat("word ", 300) + "</p>"})
	resp, err := http.Post(base+"/v1/check", "application/json", bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || !strings.Contains(string(b), "--max-bytes") {
		t.Errorf("a page over --max-bytes: %d %s", resp.StatusCode, b)
	}

	c := &serveCmd{}
	fs := newFlagSet(serveCommand, c)
	parseArgs(fs, nil)
	if got := c.bodyMemoryOrDefault(); got != defaultMemoryLimit/8 {
		t.Errorf("--body-memory default %d, want an eighth of --memory-limit", got)
	}
	for _, tc := range []struct {
		files uint64
		want  int
	}{{0, 0}, {1024, 64}, {4096, 4096 - storeFiles - 16}, {1 << 20, maxServeConns}} {
		if got := c.maxConnsOrDefault(tc.files); got != tc.want {
			t.Errorf("--max-conns default with %d open files: %d, want %d", tc.files, got, tc.want)
		}
	}
	parseArgs(fs, []string{"--max-conns", "7", "--body-memory", "1MiB"})
	if c.maxConnsOrDefault(1<<20) != 7 || c.bodyMemoryOrDefault() != 1<<20 {
		t.Error("--max-conns 7 --body-memory 1MiB not taken")
	}
	for _, args := range [][]string{{"--max-conns", "-1"}, {"--max-bytes", "0"}} {
		c := &serveCmd{}
		fs := newFlagSet(serveCommand, c)
		parseArgs(fs, args)
		if _, err := c.config(); err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Errorf("%q: %v", args, err)
		}
	}
}
