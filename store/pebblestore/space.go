package pebblestore

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/neardup/neardup/store"
)

// DefaultMinFree is the free-space watermark of a DB whose Options.MinFree is 0: room
// for the log and two memtables' flushes (64 MiB each) and a few compactions' outputs,
// which pebble writes before it deletes their inputs.
const DefaultMinFree = 512 << 20

// spaceCheckEvery is how long a free-space reading is used before statfs is asked
// again: a write pays for one statfs call at most this often, and writes resume at most
// this long after space comes back.
const spaceCheckEvery = 100 * time.Millisecond

// space keeps the free-space watermark of a DB: the last reading of the disk's free
// space and when it was taken, and whether pebble's last flush failed for want of it. It
// is safe for concurrent use.
type space struct {
	fs   vfs.FS
	dir  string
	min  uint64 // 0: no watermark
	read atomic.Int64
	err  atomic.Pointer[error] // the last reading's verdict; nil when above the watermark
	full atomic.Bool           // the last flush failed with ENOSPC
}

// check returns nil when writes may go on, or an error wrapping store.ErrNoSpace that
// says how much is free; it reads the disk's free space when the last reading is older
// than spaceCheckEvery.
func (s *space) check() error {
	if s.min == 0 && !s.full.Load() {
		return nil
	}
	now := time.Now().UnixNano()
	if last := s.read.Load(); now-last >= int64(spaceCheckEvery) && s.read.CompareAndSwap(last, now) {
		s.refresh()
	}
	if p := s.err.Load(); p != nil {
		return *p
	}
	if s.full.Load() {
		return fmt.Errorf("%w: flushing %s to a table ran out of disk space; writes are refused until a flush succeeds: free space on its disk", store.ErrNoSpace, s.dir)
	}
	return nil
}

// refresh reads the disk's free space and records the verdict. A file system that
// cannot tell (an in-memory one) has no watermark.
func (s *space) refresh() {
	if s.min == 0 {
		return
	}
	u, err := s.fs.GetDiskUsage(s.dir)
	if err != nil {
		s.err.Store(nil)
		return
	}
	if err := s.verdict(u.AvailBytes); err != nil {
		s.err.Store(&err)
	} else {
		s.err.Store(nil)
	}
}

// verdict returns the error of avail free bytes, or nil when they are enough.
func (s *space) verdict(avail uint64) error {
	if avail >= s.min {
		return nil
	}
	return fmt.Errorf("%w: the disk of %s has %s free, under the watermark of %s: free space on it or lower the watermark; writes resume by themselves once it is above",
		store.ErrNoSpace, s.dir, mib(avail), mib(s.min))
}

// listener returns the pebble event listener that tracks flushes that failed for want
// of space: they refuse new writes until a flush succeeds. Pebble retries a failed
// flush until one succeeds (the memtable waits for it), so the refusal ends by itself
// once space is freed. Compactions are left out: one that fails is not retried until
// writes come, and refusing writes would wait for ever; the watermark covers them.
func (s *space) listener() *pebble.EventListener {
	return &pebble.EventListener{
		FlushEnd: func(info pebble.FlushInfo) {
			s.full.Store(errors.Is(info.Err, syscall.ENOSPC))
		},
	}
}

// blobFloor is the free space under which the store writes no blob files: a blob file
// whose last write fails makes pebble v2.1.7 panic in a background goroutine, ending the
// process (a nil file in fileBufferedWritable.Abort, from blob.FileWriter.Close), where
// a failed sstable is an error pebble reports and retries. 128 MiB holds the blob files
// of a flush of the two 64 MiB memtables.
const blobFloor = 128 << 20

// blobsSafe reports whether pebble may write blob files: the last flush did not run out
// of space, and the disk has blobFloor bytes free or cannot tell
// (an in-memory file system). Pebble asks at every flush and compaction; it costs a
// statfs.
func (s *space) blobsSafe() bool {
	if s.full.Load() {
		return false
	}
	u, err := s.fs.GetDiskUsage(s.dir)
	return err != nil || u.AvailBytes >= blobFloor
}

// mib formats bytes in MiB.
func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }
