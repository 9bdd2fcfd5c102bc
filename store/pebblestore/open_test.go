package pebblestore

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/store"
)

// logBuffer is a slog logger writing to a buffer safe for concurrent use.
func logBuffer() (*slog.Logger, *syncBuf) {
	b := &syncBuf{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TestWALGap removes the middle one of three write-ahead logs, which pebble replays
// around without a word, and checks that Open logs what it replayed and an error naming
// the gap, and that it logs no gap when nothing was removed. The logs stay three because
// flushes fail (injected EIO on sstables) while each AsyncFlush starts a new log.
func TestWALGap(t *testing.T) {
	for _, remove := range []bool{false, true} {
		t.Run(fmt.Sprintf("remove=%v", remove), func(t *testing.T) {
			mem, fs, tog := faultFS(syscall.EIO, ".sst", ".blob")
			d, err := Open("/data", Options{FS: fs, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			tog.On()
			var b store.Batch
			id := uint64(0)
			for group := range 3 {
				if group > 0 {
					if _, err := d.db.AsyncFlush(); err != nil {
						t.Fatal(err)
					}
				}
				for range 20 {
					id++
					crashBatch(&b, id)
					if err := d.Apply(&b); err != nil {
						t.Fatal(err)
					}
				}
			}
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			d.Close()
			names, err := crashed.List("/data")
			if err != nil {
				t.Fatal(err)
			}
			var logs []string
			for _, n := range names {
				if strings.HasSuffix(n, ".log") {
					logs = append(logs, n)
				}
			}
			slices.Sort(logs)
			if len(logs) < 3 {
				t.Fatalf("want 3 logs or more, have %v", logs)
			}
			if remove {
				if err := crashed.Remove("/data/" + logs[len(logs)-2]); err != nil {
					t.Fatal(err)
				}
			}
			log, out := logBuffer()
			d, err = Open("/data", Options{FS: crashed, Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			d.Close()
			if !strings.Contains(out.String(), "replayed the write-ahead log") {
				t.Errorf("Open did not log its replay:\n%s", out)
			}
			if gap := strings.Contains(out.String(), "has a gap"); gap != remove {
				t.Errorf("removed a log: %v; logged a gap: %v\n%s", remove, gap, out)
			}
			t.Logf("removed %v:\n%s", remove, out)
		})
	}
}

// TestLocked opens a store another process holds and checks the error: ErrLocked, with
// that process's id.
func TestLocked(t *testing.T) {
	if dir := os.Getenv("STORE_LOCK_DIR"); dir != "" {
		d, err := Open(dir, Options{MinFree: -1})
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		fmt.Println("open")
		time.Sleep(30 * time.Second)
		d.Close()
		os.Exit(0)
	}
	dir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(os.Args[0], "-test.run=^TestLocked$")
	cmd.Env = append(os.Environ(), "STORE_LOCK_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "open\n" {
		t.Fatalf("child: %q", line)
	}
	_, err = Open(dir, Options{MinFree: -1, Logger: quiet})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Open of a store another process holds: %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), "process "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("the error does not name process %d: %v", cmd.Process.Pid, err)
	}
}

// syncBuf is a strings.Builder safe for concurrent use.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
