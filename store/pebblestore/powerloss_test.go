package pebblestore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/vfs/errorfs"

	"github.com/neardup/neardup/store"
)

// quiet is the logger of the tests' stores: pebble's errors under injected faults are
// expected.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// writers are goroutines writing crashBatch batches to a DB, recording the ids whose
// batch was acknowledged (Apply, or Write then Sync, returned nil) and the errors.
type writers struct {
	wg    sync.WaitGroup
	stop  atomic.Bool
	mu    sync.Mutex
	acked []uint64
	errs  []error
	next  atomic.Uint64
}

// startWriters starts n writers on d in mode "apply" or "write+sync", ids from base+1.
func startWriters(d *DB, mode string, base uint64, n int) *writers {
	w := &writers{}
	w.next.Store(base)
	var writeMu sync.Mutex
	for range n {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			var b store.Batch
			for !w.stop.Load() {
				var id uint64
				var err error
				if mode == "apply" {
					id = w.next.Add(1)
					crashBatch(&b, id)
					err = d.Apply(&b)
				} else {
					writeMu.Lock()
					id = w.next.Add(1)
					crashBatch(&b, id)
					err = d.Write(&b)
					writeMu.Unlock()
					if err == nil {
						err = d.Sync()
					}
				}
				w.mu.Lock()
				if err == nil {
					w.acked = append(w.acked, id)
				} else {
					w.errs = append(w.errs, err)
				}
				w.mu.Unlock()
				if err != nil {
					time.Sleep(time.Millisecond) // a refused write is retried, not spun on
				}
			}
		}()
	}
	return w
}

// counts returns how many writes were acknowledged and refused so far.
func (w *writers) counts() (acked, failed int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked), len(w.errs)
}

// snapshot returns the ids acknowledged so far.
func (w *writers) snapshot() []uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]uint64(nil), w.acked...)
}

// halt stops the writers and waits for them.
func (w *writers) halt() {
	w.stop.Store(true)
	w.wg.Wait()
}

// waitFor polls cond every millisecond for up to 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("waited 20 s for %s", what)
		}
	}
}

// TestPowerLoss checks that every acknowledged batch survives a power loss, which kill
// -9 (TestCrash) cannot test as the page cache outlives the process. The store runs on
// pebble's in-memory file system; 4 writers acknowledge batches (Apply, or Write then
// Sync, in alternate rounds) and, at a moment the round's seed picks, the file system is
// crash-cloned: the clone keeps what was synced and a random part (the seed's
// percentage) of what was not, as a disk may after power loss. The store is reopened on
// the clone, written and crashed again, and reopened: every batch acknowledged before
// either crash must be there, record and postings. 50 seeded rounds; a failure names
// its seed.
func TestPowerLoss(t *testing.T) {
	rounds := 50
	if testing.Short() {
		rounds = 10
	}
	for seed := range rounds {
		r := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
		mode := []string{"write+sync", "apply"}[seed%2]
		fs := vfs.NewCrashableMem()
		var acked []uint64
		for gen := range 2 {
			d, err := Open("/data", Options{FS: fs, Logger: quiet})
			if err != nil {
				t.Fatalf("seed %d: opening after crash %d: %v", seed, gen, err)
			}
			w := startWriters(d, mode, uint64(gen)<<32, 4)
			target := 10 + r.IntN(100)
			waitFor(t, "acknowledged batches", func() bool { n, _ := w.counts(); return n >= target })
			before := w.snapshot() // acknowledged, hence synced, before the clone begins
			crashed := fs.CrashClone(vfs.CrashCloneCfg{UnsyncedDataPercent: r.IntN(101), RNG: r})
			w.halt()
			if _, failed := w.counts(); failed > 0 {
				t.Fatalf("seed %d: %d writes failed: %v", seed, failed, w.errs[0])
			}
			d.Close()
			acked = append(acked, before...)
			fs = crashed
		}
		d, err := Open("/data", Options{FS: fs, Logger: quiet})
		if err != nil {
			t.Fatalf("seed %d: opening after the last crash: %v", seed, err)
		}
		lost := checkAcked(t, d, acked)
		d.Close()
		if lost > 0 {
			t.Fatalf("seed %d (%s): %d of %d acknowledged batches lost to the power loss", seed, mode, lost, len(acked))
		}
	}
}

// faultFS returns pebble's in-memory file system and, over it, one whose writes and
// syncs of the files whose names end with one of suffixes fail with errno while the
// returned toggle is on.
func faultFS(errno syscall.Errno, suffixes ...string) (*vfs.MemFS, *errorfs.FS, *errorfs.Toggle) {
	mem := vfs.NewCrashableMem()
	tog := &errorfs.Toggle{Injector: errorfs.InjectorFunc(func(op errorfs.Op) error {
		switch op.Kind {
		case errorfs.OpFileWrite, errorfs.OpFileWriteAt, errorfs.OpFileSync, errorfs.OpFileSyncData,
			errorfs.OpFileSyncTo, errorfs.OpFileFlush, errorfs.OpFilePreallocate:
		default:
			return nil
		}
		for _, s := range suffixes {
			if strings.HasSuffix(op.Path, s) {
				return &os.PathError{Op: "write", Path: op.Path, Err: errno}
			}
		}
		return nil
	})}
	return mem, errorfs.Wrap(mem, tog), tog
}

// TestLogFaults injects ENOSPC and EIO into the writes and syncs of the write-ahead log
// while 4 writers write, and checks that the writes then fail with store.ErrFailed and
// the process goes on (pebble's default logger would end it: os.Exit inside the test),
// that Health says so and reads still work, and that after a power loss (a crash clone
// keeping only what was synced) every acknowledged batch is there, so none was
// acknowledged without being durable.
func TestLogFaults(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		for _, mode := range []string{"write+sync", "apply"} {
			t.Run(fmt.Sprintf("%v/%s", errno, mode), func(t *testing.T) {
				mem, fs, tog := faultFS(errno, ".log")
				d, err := Open("/data", Options{FS: fs, Logger: quiet})
				if err != nil {
					t.Fatal(err)
				}
				w := startWriters(d, mode, 0, 4)
				waitFor(t, "acknowledged batches", func() bool { n, _ := w.counts(); return n >= 50 })
				tog.On()
				waitFor(t, "refused writes", func() bool { _, n := w.counts(); return n >= 20 })
				w.halt()
				acked := w.snapshot()
				for _, err := range w.errs {
					if !errors.Is(err, store.ErrFailed) {
						t.Fatalf("a write failed with %v, want store.ErrFailed", err)
					}
				}
				if err := d.Health(); !errors.Is(err, store.ErrFailed) {
					t.Fatalf("Health = %v, want store.ErrFailed", err)
				}
				if lost := checkAcked(t, d, acked[:10]); lost > 0 {
					t.Fatalf("reads after the fault: %d of 10 acknowledged batches not readable", lost)
				}
				crashed := mem.CrashClone(vfs.CrashCloneCfg{})
				d.Close()
				d, err = Open("/data", Options{FS: crashed, Logger: quiet})
				if err != nil {
					t.Fatalf("reopening after the fault: %v", err)
				}
				defer d.Close()
				if lost := checkAcked(t, d, acked); lost > 0 {
					t.Fatalf("%d of %d acknowledged batches lost", lost, len(acked))
				}
				t.Logf("%d acknowledged, all durable; %d refused", len(acked), len(w.errs))
			})
		}
	}
}

// TestTableFaults injects ENOSPC and EIO into the writes of sstables and blob files, so
// that pebble's flushes fail, while 4 writers write. With EIO the writes, durable in the
// log, go on being acknowledged; with ENOSPC they are refused with store.ErrNoSpace (and
// Health says so) until the fault ends and a flush succeeds, then taken again. Either
// way, after a power loss every acknowledged batch is there.
func TestTableFaults(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			mem, fs, tog := faultFS(errno, ".sst", ".blob")
			d, err := Open("/data", Options{FS: fs, Logger: quiet})
			if err != nil {
				t.Fatal(err)
			}
			w := startWriters(d, "write+sync", 0, 4)
			waitFor(t, "acknowledged batches", func() bool { n, _ := w.counts(); return n >= 50 })
			tog.On()
			if _, err := d.db.AsyncFlush(); err != nil {
				t.Fatal(err)
			}
			if errno == syscall.ENOSPC {
				waitFor(t, "writes refused for want of space", func() bool { return errors.Is(d.Health(), store.ErrNoSpace) })
				_, refused := w.counts()
				waitFor(t, "refused writes", func() bool { _, n := w.counts(); return n > refused })
			} else {
				n, _ := w.counts()
				waitFor(t, "more acknowledged writes", func() bool { m, _ := w.counts(); return m >= n+50 })
			}
			tog.Off()
			if _, err := d.db.AsyncFlush(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "writes taken again", func() bool { return d.Health() == nil })
			n, _ := w.counts()
			waitFor(t, "acknowledged batches after the fault", func() bool { m, _ := w.counts(); return m >= n+20 })
			w.halt()
			for _, err := range w.errs {
				if !errors.Is(err, store.ErrNoSpace) {
					t.Fatalf("a write failed with %v, want store.ErrNoSpace", err)
				}
			}
			acked := w.snapshot()
			crashed := mem.CrashClone(vfs.CrashCloneCfg{})
			d.Close()
			d, err = Open("/data", Options{FS: crashed, Logger: quiet})
			if err != nil {
				t.Fatalf("reopening after the fault: %v", err)
			}
			defer d.Close()
			if lost := checkAcked(t, d, acked); lost > 0 {
				t.Fatalf("%d of %d acknowledged batches lost", lost, len(acked))
			}
			t.Logf("%d acknowledged, all durable; %d refused", len(acked), len(w.errs))
		})
	}
}
