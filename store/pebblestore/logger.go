package pebblestore

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
)

// replayFormat is the format of the line pebble v2 logs (Infof) for each WAL it replays
// on open; its arguments are the job, the WAL, the offset it stopped at, the keys and the
// batches replayed. Open counts these lines to tell what it replayed.
const replayFormat = "[JOB %d] WAL %s stopped reading at offset: %s; replayed %d keys in %d batches"

// replayed is what pebble replayed from one WAL when it opened the store.
type replayed struct {
	wal     string // as pebble names it
	offset  string // where reading stopped
	keys    int64
	batches int64
}

// logger is pebble's Logger, writing to a slog.Logger: its routine Infof lines (every
// WAL found, every flush) at debug, its errors at error. Its Fatalf panics with a
// fatalError instead of ending the process as pebble's default logger does: pebble calls
// it from the goroutine that commits a batch when writing or syncing the log failed (a
// full disk, an I/O error), and DB.commit recovers it, refuses further writes with
// store.ErrFailed and keeps the process, and its reads, alive. It records the replay
// lines of Open. Elsewhere (pebble's background work) a panic ends the process as
// pebble's exit did. It is safe for concurrent use.
type logger struct {
	log *slog.Logger

	mu     sync.Mutex
	replay []replayed

	abandoned atomic.Bool // Open gave up on this store (see openPebble)
}

// fatalError is the panic of logger.Fatalf.
type fatalError struct{ msg string }

func (l *logger) Infof(format string, args ...any) {
	if format == replayFormat && len(args) == 5 {
		r := replayed{wal: fmt.Sprint(args[1]), offset: fmt.Sprint(args[2])}
		r.keys, _ = toInt64(args[3])
		r.batches, _ = toInt64(args[4])
		l.mu.Lock()
		l.replay = append(l.replay, r)
		l.mu.Unlock()
	}
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		l.log.Debug("pebble: " + fmt.Sprintf(format, args...))
	}
}

func (l *logger) Errorf(format string, args ...any) {
	l.log.Error("pebble: " + fmt.Sprintf(format, args...))
}

func (l *logger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	l.log.Error("pebble: " + msg)
	if l.abandoned.Load() {
		runtime.Goexit() // nothing uses the store; its goroutine must not end the process
	}
	panic(fatalError{msg})
}

// replays returns the replay lines logged so far.
func (l *logger) replays() []replayed {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]replayed(nil), l.replay...)
}

// toInt64 converts the integer kinds pebble passes to its log lines.
func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int:
		return int64(n), true
	case int64:
		return n, true
	case uint64:
		return int64(n), true
	}
	return 0, false
}
