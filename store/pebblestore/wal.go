package pebblestore

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/cockroachdb/pebble/v2/batchrepr"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/cockroachdb/pebble/v2/wal"
)

// walStart is a write-ahead log file and the sequence number of its first batch.
type walStart struct {
	name  string
	first uint64
	empty bool // no batch, or none readable
}

// scanWALs returns the write-ahead logs in dir, in pebble's order (ascending numbers),
// with the sequence number of each one's first batch: one record read per log.
func scanWALs(fs vfs.FS, dir string) ([]walStart, error) {
	logs, err := wal.Scan(wal.Dir{FS: fs, Dirname: dir})
	if err != nil {
		return nil, err
	}
	starts := make([]walStart, len(logs))
	for i, ll := range logs {
		starts[i] = walStart{name: ll.Num.String() + ".log", empty: true}
		r := ll.OpenForRead()
		rec, _, err := r.NextRecord()
		if err == nil {
			var hdr [batchrepr.HeaderLen]byte
			if _, err := io.ReadFull(rec, hdr[:]); err == nil {
				if h, ok := batchrepr.ReadHeader(hdr[:]); ok {
					starts[i].first, starts[i].empty = uint64(h.SeqNum), false
				}
			}
		}
		r.Close()
	}
	return starts, nil
}

// checkReplay logs what pebble replayed from the logs (the last len(replays) of wals,
// as pebble replays every log from the oldest one the manifest still needs) and reports
// the gaps it can see: a log whose first sequence number is not where the one before it
// ended had a log, or the end of one, removed between them, and the acknowledged writes
// that were there are lost. It returns the number of gaps.
func checkReplay(log *slog.Logger, dir string, wals []walStart, replays []replayed) int {
	if len(replays) > len(wals) {
		log.Warn("pebblestore: pebble replayed more logs than were found; not checking the log sequence", "data", dir)
		return 0
	}
	var keys, batches int64
	for _, r := range replays {
		keys += r.keys
		batches += r.batches
	}
	log.Info("replayed the write-ahead log", "data", dir, "logs", len(replays), "batches", batches, "keys", keys)
	replayedWALs := wals[len(wals)-len(replays):]
	gaps := 0
	var prev *walStart
	var prevEnd uint64
	for i, r := range replays {
		w := &replayedWALs[i]
		log.Debug("replayed a write-ahead log", "data", dir, "wal", w.name, "stopped_at", r.offset, "batches", r.batches, "keys", r.keys)
		if w.empty {
			continue
		}
		if prev != nil && w.first != prevEnd {
			gaps++
			log.Error(fmt.Sprintf("pebblestore: the write-ahead log of %s has a gap: %s ends at sequence number %d but %s begins at %d; a log file, or the end of %s, was removed or truncated, and the writes it held are lost (restore from a backup if they matter)",
				dir, prev.name, prevEnd, w.name, w.first, prev.name), "data", dir)
		}
		prev, prevEnd = w, w.first+uint64(r.keys)
	}
	return gaps
}
