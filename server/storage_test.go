package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/pebblestore"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// storageDoc is the JSON of a document of random words, id "doc-N".
func storageDoc(r *rand.Rand, n int) string {
	words := make([]string, 60)
	for i := range words {
		words[i] = fmt.Sprintf("w%d", r.IntN(50_000))
	}
	b, _ := json.Marshal(map[string]string{"id": fmt.Sprintf("doc-%d", n), "text": strings.Join(words, " ")})
	return string(b)
}

// send sends a request with the write token and returns the status and body.
func send(t *testing.T, ts *httptest.Server, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v (the server closed the connection?)", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// storeServer is a server over a detector over db, with db's health and backup.
func storeServer(t *testing.T, db *pebblestore.DB) *httptest.Server {
	t.Helper()
	det, err := neardup.OpenDetector(db, e2eOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{
		Tokens: []server.Token{{Scope: server.ScopeWrite, Value: e2eToken}},
		Health: db.Health, Backup: db.Checkpoint, Logger: quietLog,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(det)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return ts
}

// TestLogFailure makes the store's write-ahead log fail (injected EIO, then ENOSPC)
// and checks the service's answers: 503 store_failed for the add that hit it and every
// add after it, never a closed connection (pebble ended the process), /readyz 503
// store_failed with the reason, and reads of the documents added before still 200.
func TestLogFailure(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		t.Run(errno.Error(), func(t *testing.T) {
			on := &atomic.Bool{}
			fs := errorfs.Wrap(vfs.NewMem(), errorfs.InjectorFunc(func(op errorfs.Op) error {
				if on.Load() && strings.HasSuffix(op.Path, ".log") && op.Kind.ReadOrWrite() == errorfs.OpIsWrite {
					return &os.PathError{Op: "write", Path: op.Path, Err: errno}
				}
				return nil
			}))
			db, err := pebblestore.Open("/data", pebblestore.Options{FS: fs, Logger: quietLog})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			ts := storeServer(t, db)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range 5 {
				if code, body := send(t, ts, "POST", "/v1/documents", storageDoc(r, i)); code != 200 {
					t.Fatalf("add %d: %d %s", i, code, body)
				}
			}
			on.Store(true)
			for i := 5; i < 8; i++ {
				code, body := send(t, ts, "POST", "/v1/documents", storageDoc(r, i))
				if code != http.StatusServiceUnavailable || !strings.Contains(body, "store_failed") {
					t.Fatalf("add %d with the log failing: %d %s, want 503 store_failed", i, code, body)
				}
			}
			code, body := send(t, ts, "GET", "/readyz", "")
			if code != http.StatusServiceUnavailable || !strings.Contains(body, `"status":"store_failed"`) || !strings.Contains(body, "reason") {
				t.Errorf("/readyz with the log failed: %d %s", code, body)
			}
			if code, body := send(t, ts, "GET", "/v1/documents/doc-3", ""); code != 200 {
				t.Errorf("a read with the log failed: %d %s", code, body)
			}
		})
	}
}

// TestBackup adds documents from 4 writers while POST /v1/admin/backup copies the
// store, then serves the copy and checks that every document acknowledged before the
// backup request was sent is in it; and that the endpoint refuses a relative path and
// an existing directory.
func TestBackup(t *testing.T) {
	dir := t.TempDir()
	db, err := pebblestore.Open(filepath.Join(dir, "data"), pebblestore.Options{MinFree: -1, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts := storeServer(t, db)
	var (
		mu    sync.Mutex
		acked []int
		next  atomic.Int64
		stop  atomic.Bool
		wg    sync.WaitGroup
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for !stop.Load() {
				n := int(next.Add(1))
				code, body := send(t, ts, "POST", "/v1/documents", storageDoc(r, n))
				if code != 200 {
					t.Errorf("add %d: %d %s", n, code, body)
					return
				}
				mu.Lock()
				acked = append(acked, n)
				mu.Unlock()
			}
		}()
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	before := append([]int(nil), acked...)
	mu.Unlock()
	backup := filepath.Join(dir, "backup")
	body, _ := json.Marshal(map[string]string{"dir": backup})
	if code, resp := send(t, ts, "POST", "/v1/admin/backup", string(body)); code != 200 {
		t.Fatalf("backup: %d %s", code, resp)
	}
	time.Sleep(50 * time.Millisecond) // writes go on after the backup
	stop.Store(true)
	wg.Wait()
	if code, resp := send(t, ts, "POST", "/v1/admin/backup", string(body)); code != http.StatusConflict {
		t.Errorf("backup to an existing directory: %d %s, want 409", code, resp)
	}
	if code, resp := send(t, ts, "POST", "/v1/admin/backup", `{"dir":"relative/dir"}`); code != http.StatusBadRequest {
		t.Errorf("backup to a relative path: %d %s, want 400", code, resp)
	}

	copyDB, err := pebblestore.Open(backup, pebblestore.Options{MinFree: -1, Logger: quietLog})
	if err != nil {
		t.Fatalf("opening the backup: %v", err)
	}
	defer copyDB.Close()
	cts := storeServer(t, copyDB)
	missing := 0
	for _, n := range before {
		if code, _ := send(t, cts, "GET", fmt.Sprintf("/v1/documents/doc-%d", n), ""); code != 200 {
			missing++
		}
	}
	if missing > 0 {
		t.Fatalf("%d of the %d documents acknowledged before the backup are not in it", missing, len(before))
	}
	t.Logf("%d documents acknowledged before the backup, all in it", len(before))
}

// unreachableStore is a store whose writes fail with store.ErrUnavailable while down,
// as a Redis Cluster's do while a master fails over.
type unreachableStore struct {
	*store.Memory
	down atomic.Bool
}

func (s *unreachableStore) Apply(b *store.Batch) error {
	if s.down.Load() {
		return fmt.Errorf("%w: dial tcp 127.0.0.1:7001: connect: connection refused", store.ErrUnavailable)
	}
	return s.Memory.Apply(b)
}

func (s *unreachableStore) Write(b *store.Batch) error { return s.Apply(b) }

// TestStoreUnavailable checks that a store that cannot be reached for now is answered
// 503 store_unavailable with a Retry-After, which clients retry, not 500, and that adds
// are taken again once it is back.
func TestStoreUnavailable(t *testing.T) {
	st := &unreachableStore{Memory: store.NewMemory()}
	det, err := neardup.OpenDetector(st, e2eOptions())
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Tokens: []server.Token{{Scope: server.ScopeWrite, Value: e2eToken}}, Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	srv.SetDetector(det)
	ts := httptest.NewServer(srv)
	defer ts.Close()
	r := rand.New(rand.NewPCG(1, 2))
	st.down.Store(true)
	req, _ := http.NewRequest("POST", ts.URL+"/v1/documents", strings.NewReader(storageDoc(r, 1)))
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"store_unavailable"`) || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("add with the store unreachable: %d %s (Retry-After %q); want 503 store_unavailable with a Retry-After", resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
	st.down.Store(false)
	if code, body := send(t, ts, "POST", "/v1/documents", storageDoc(r, 1)); code != 200 {
		t.Fatalf("add once the store is back: %d %s", code, body)
	}
}
