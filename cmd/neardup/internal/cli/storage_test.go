package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testClient is the tests' HTTP client: a service that stopped answering fails the test
// rather than hanging it.
var testClient = &http.Client{Timeout: 30 * time.Second}

// mountTmpfs mounts a tmpfs of size bytes on a new directory and returns it; it skips
// the test where mounting is not allowed (not root), but fails under CI=true, where the
// test must run.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mounting a tmpfs to fill up: %v (CI runs as root and must run this test)", err)
		}
		t.Skipf("cannot mount a tmpfs to fill up (%v): run as root to test a full disk", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a file of zeros in dir until the disk has less than leave bytes free, or
// is full (leave 0), and returns its path.
func fill(t *testing.T, dir string, leave uint64) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			t.Fatal(err)
		}
		if free := st.Bavail * uint64(st.Bsize); leave > 0 && free < leave {
			return path
		}
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path
			}
			t.Fatal(err)
		}
	}
}

// httpDo sends a request with an optional body and returns the status and body.
func httpDo(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	resp, err := testClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (did the service end?)", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// docJSON is the JSON of a document of its own words, id "doc-N".
func docJSON(n int) string {
	words := make([]string, 50)
	for i := range words {
		words[i] = fmt.Sprintf("w%d_%d", n, i)
	}
	b, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("doc-%d", n), "text": strings.Join(words, " ")})
	return string(b)
}

// TestServeDiskFull runs the service on a 48 MiB tmpfs with --min-free 16MiB and fills
// the disk: adds get 507 with a message that says how much is free, reads and deletes
// still work,
// /readyz answers 503 no_space with the reason, and once the filler is removed adds are
// taken again by themselves. Then, the service stopped and the disk filled to the last
// byte, serve refuses to start with the watermark's message, and with no watermark
// (--min-free 0) it fails with an error, not pebble's panic.
func TestServeDiskFull(t *testing.T) {
	mnt := mountTmpfs(t, 48<<20)
	data := filepath.Join(mnt, "data")
	args := []string{"--addr", "127.0.0.1:0", "--data", data, "--min-free", "16MiB", "--cache-size", "8MiB", "--band-memory", "8MiB"}
	base, stop, logs := startServe(t, nil, args...)
	waitReady(t, base)
	for i := range 5 {
		if code, body := httpDo(t, "POST", base+"/v1/documents", docJSON(i)); code != 200 {
			t.Fatalf("add %d: %d %s", i, code, body)
		}
	}
	filler := fill(t, mnt, 12<<20)
	time.Sleep(150 * time.Millisecond) // past the store's free-space reading
	code, body := httpDo(t, "POST", base+"/v1/documents", docJSON(5))
	if code != http.StatusInsufficientStorage || !strings.Contains(body, "free") {
		t.Fatalf("add below the watermark: %d %s, want 507 saying how much is free", code, body)
	}
	if code, body := httpDo(t, "GET", base+"/v1/documents/doc-2", ""); code != 200 {
		t.Errorf("read below the watermark: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", base+"/readyz", ""); code != 503 || !strings.Contains(body, `"no_space"`) || !strings.Contains(body, "watermark") {
		t.Errorf("/readyz below the watermark: %d %s, want 503 no_space with the reason", code, body)
	}
	if code, body := httpDo(t, "DELETE", base+"/v1/documents/doc-1", ""); code >= 300 {
		t.Errorf("delete below the watermark: %d %s, want it done (deletes are how space comes back)", code, body)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	if code, body := httpDo(t, "POST", base+"/v1/documents", docJSON(6)); code != 200 {
		t.Fatalf("add once space is back: %d %s", code, body)
	}
	if code, body := httpDo(t, "GET", base+"/readyz", ""); code != 200 {
		t.Errorf("/readyz once space is back: %d %s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, logs)
	}

	fill(t, mnt, 0)
	err := serveErr(t, "--addr", "127.0.0.1:0", "--data", data, "--min-free", "16MiB", "--cache-size", "8MiB")
	if err == nil || !strings.Contains(err.Error(), "watermark") {
		t.Errorf("serve on a full disk: %v; want the watermark's message", err)
	}
	t.Logf("serve on a full disk: %v", err)

	// With no watermark, pebble itself meets the full disk: it flushes the log it
	// replayed before it opens, and retries the flush for ever. Serve must fail with the
	// store's error, not hang loading or panic.
	err = serveErr(t, "--addr", "127.0.0.1:0", "--data", data, "--min-free", "0", "--cache-size", "8MiB")
	if err == nil || !strings.Contains(err.Error(), "ran out of disk space") {
		t.Errorf("--min-free 0, disk full: serve returned %v; want it to say the disk is full", err)
	}
	t.Logf("--min-free 0, disk full: %v", err)
	os.Remove(filepath.Join(mnt, "filler")) // the abandoned open then completes and closes
}

// waitReady waits up to 30 s for /readyz to answer 200.
func waitReady(t *testing.T, base string) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := testClient.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(end) {
			t.Fatal("the service was not ready within 30 s")
		}
	}
}

// serveErr runs serve with args and returns its error, stopping it if it starts and
// loads (then the error is nil).
func serveErr(t *testing.T, args ...string) error {
	t.Helper()
	base, stop, _ := startServe(t, nil, args...)
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		resp, err := testClient.Get(base + "/readyz")
		if err != nil {
			break // serve returned: its listener is closed
		}
		resp.Body.Close()
		if resp.StatusCode == 200 {
			break
		}
	}
	return stop()
}

// TestServeRefusesEarly checks that serve refuses an address other machines can reach
// without tokens, and a --debug-addr other than loopback, before it opens the store (the
// directory is not even made), where the refusal used to come after loading the index.
func TestServeRefusesEarly(t *testing.T) {
	for _, args := range [][]string{
		{"--addr", "0.0.0.0:0"},
		{"--addr", "127.0.0.1:0", "--debug-addr", "0.0.0.0:0"},
	} {
		data := filepath.Join(t.TempDir(), "data")
		c := &serveCmd{}
		fs := newFlagSet(serveCommand, c)
		pos, err := parseArgs(fs, append(args, "--data", data))
		if err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second) // a serve that starts stops
		err = c.serve(ctx, &env{stdout: io.Discard, stderr: &logs}, pos, func(string) string { return "" }, nil)
		cancel()
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: %v, want a usage error", args, err)
			continue
		}
		if _, serr := os.Stat(data); serr == nil {
			t.Errorf("%v: refused (%v) after opening the store", args, err)
		}
		t.Logf("%v: %v", args, err)
	}
}

// TestServeLocked starts a second service on the --data of a running one: it must say
// that the directory is locked, not "resource temporarily unavailable" alone.
func TestServeLocked(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	base, stop, _ := startServe(t, nil, "--addr", "127.0.0.1:0", "--data", data, "--min-free", "0")
	defer stop()
	waitReady(t, base)
	err := serveErr(t, "--addr", "127.0.0.1:0", "--data", data, "--min-free", "0")
	if err == nil || !strings.Contains(err.Error(), "locked") || !strings.Contains(err.Error(), "neardup serve") {
		t.Fatalf("a second serve on the same --data: %v, want it to say the directory is locked", err)
	}
}

// TestBackupCommand adds documents from 4 writers to a running service while neardup
// backup --server asks it for a copy; neardup backup --data on the same store says a
// service holds it. A service started on the copy has every document acknowledged
// before the backup began. Then, the service stopped, backup --data copies the store
// itself.
func TestBackupCommand(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	base, stop, logs := startServe(t, map[string]string{"NEARDUP_TOKENS": "write:w1"}, "--addr", "127.0.0.1:0", "--data", data, "--min-free", "0")
	waitReady(t, base)
	var (
		mu    sync.Mutex
		acked []int
		next  atomic.Int64
		halt  atomic.Bool
		wg    sync.WaitGroup
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !halt.Load() {
				n := int(next.Add(1))
				req, _ := http.NewRequest("POST", base+"/v1/documents", strings.NewReader(docJSON(n)))
				req.Header.Set("Authorization", "Bearer w1")
				resp, err := testClient.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("add %d: %d", n, resp.StatusCode)
					return
				}
				mu.Lock()
				acked = append(acked, n)
				mu.Unlock()
			}
		}()
	}
	for len(snapshot(&mu, &acked)) < 100 {
		time.Sleep(5 * time.Millisecond)
	}
	before := snapshot(&mu, &acked)
	live := filepath.Join(dir, "live")
	t.Setenv("NEARDUP_TOKEN", "w1")
	var out, errOut bytes.Buffer
	if code := Main([]string{"backup", "--server", base, "--out", live}, nil, &out, &errOut); code != 0 {
		t.Fatalf("backup --server: exit %d: %s", code, errOut.String())
	}
	errOut.Reset()
	if code := Main([]string{"backup", "--data", data, "--out", filepath.Join(dir, "other")}, nil, &out, &errOut); code == 0 || !strings.Contains(errOut.String(), "--server") {
		t.Errorf("backup --data of a store a service holds: exit %d: %s; want it to point at --server", code, errOut.String())
	}
	halt.Store(true)
	wg.Wait()
	if err := stop(); err != nil {
		t.Fatalf("serve: %v\n%s", err, logs)
	}
	stopped := filepath.Join(dir, "stopped")
	errOut.Reset()
	if code := Main([]string{"backup", "--data", data, "--out", stopped}, nil, &out, &errOut); code != 0 {
		t.Fatalf("backup --data: exit %d: %s", code, errOut.String())
	}
	all := snapshot(&mu, &acked)
	for _, c := range []struct {
		dir  string
		want []int
	}{{live, before}, {stopped, all}} {
		checkBackup(t, c.dir, c.want)
	}
}

// checkBackup serves the backup in dir and checks it holds every document of want.
func checkBackup(t *testing.T, dir string, want []int) {
	t.Helper()
	base, stop, _ := startServe(t, nil, "--addr", "127.0.0.1:0", "--data", dir, "--min-free", "0")
	waitReady(t, base)
	missing := 0
	for _, n := range want {
		if code, _ := httpDo(t, "GET", fmt.Sprintf("%s/v1/documents/doc-%d", base, n), ""); code != 200 {
			missing++
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if missing > 0 {
		t.Fatalf("%s: %d of %d acknowledged documents missing", dir, missing, len(want))
	}
	t.Logf("%s: all %d acknowledged documents there", dir, len(want))
}

// snapshot copies the ids under mu.
func snapshot(mu *sync.Mutex, ids *[]int) []int {
	mu.Lock()
	defer mu.Unlock()
	return append([]int(nil), *ids...)
}
