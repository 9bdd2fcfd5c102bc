package pebblestore

import (
	"bufio"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

var crashNoSync = flag.Bool("crash.nosync", false, "TestCrash: the child acknowledges batches after Write without Sync, to watch the test catch lost acknowledged batches")

// crashBatch fills b with document id's batch: its record and three postings, one per kind
// of key the service keeps (a SimHash table key, an exact key, a URL).
func crashBatch(b *store.Batch, id uint64) {
	b.Reset()
	b.PutRecord(id, fmt.Appendf(nil, "record %d %s", id, strings.Repeat("x", int(id%200))))
	b.Add(1, binary.BigEndian.AppendUint64(nil, id%1021), id)
	b.Add(2, binary.BigEndian.AppendUint64(make([]byte, 24), id), id)
	b.Add(3, fmt.Appendf(nil, "https://example.com/%d", id), id)
}

// TestCrash checks that every batch acknowledged survives kill -9, in the two ways a
// caller makes batches durable: Write under the caller's lock then Sync outside it (the
// service's pattern; 20 rounds), and Apply (5 rounds). Each round re-executes the test
// binary as a child that opens the store and writes batches from 8 goroutines, writing
// each id to standard output once its batch is durable; the parent kills it with SIGKILL
// after a random delay, reopens the store, and checks that the record and postings of
// every id acknowledged in the round are there; the last round checks those of every
// round.
//
// Killing the process does not lose the operating system's page cache, so this checks
// that an acknowledged batch had been written to the WAL file, not that it had reached
// the disk: that is what the fsync adds, against power loss, and a process kill cannot
// test it. With -crash.nosync (the child acknowledges after Write alone, with batches
// still in pebble's buffer) the test does fail.
func TestCrash(t *testing.T) {
	if dir := os.Getenv("STORE_CRASH_DIR"); dir != "" {
		crashChild(dir, os.Getenv("STORE_CRASH_MODE"))
		return
	}
	for _, c := range []struct {
		mode   string
		rounds int
	}{{"write+sync", 20}, {"apply", 5}} {
		t.Run(c.mode, func(t *testing.T) {
			mode := c.mode
			if *crashNoSync {
				mode = "write"
			}
			rounds := c.rounds
			if testing.Short() {
				rounds = 3
			}
			crashRounds(t, mode, rounds)
		})
	}
}

// crashRounds runs TestCrash's rounds in one directory with children of the mode given.
func crashRounds(t *testing.T, mode string, rounds int) {
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 0))
	var acked []uint64
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrash$")
		cmd.Env = append(os.Environ(), "STORE_CRASH_DIR="+dir, "STORE_CRASH_MODE="+mode,
			fmt.Sprintf("STORE_CRASH_BASE=%d", uint64(round)<<32))
		cmd.Stderr = os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		first := make(chan struct{})
		read := make(chan []uint64)
		go func() { read <- readAcks(out, first) }()
		select {
		case <-first:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatal("the child acknowledged nothing in 30 s")
		}
		time.Sleep(time.Duration(r.IntN(200)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		ids := <-read
		cmd.Wait()
		acked = append(acked, ids...)

		p, err := Open(dir, Options{})
		if err != nil {
			t.Fatalf("round %d: reopening after kill -9: %v", round, err)
		}
		check := ids // this round's; the last round checks all of them again
		if round == rounds-1 {
			check = acked
		}
		lost := checkAcked(t, p, check)
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if lost > 0 {
			t.Fatalf("round %d: %d of %d acknowledged documents lost", round, lost, len(check))
		}
		t.Logf("round %d: %d acknowledged, %d checked, all present", round, len(ids), len(check))
	}
}

// readAcks returns the ids of the complete lines of r, closing first after the first one.
func readAcks(r io.Reader, first chan struct{}) []uint64 {
	var ids []uint64
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return ids // a line cut by the kill has no newline and is not an acknowledgement
		}
		id, perr := strconv.ParseUint(strings.TrimSuffix(line, "\n"), 10, 64)
		if perr != nil {
			panic(fmt.Sprintf("child wrote %q", line))
		}
		if ids = append(ids, id); len(ids) == 1 {
			close(first)
		}
	}
}

// checkAcked reports how many of the acked documents are missing or incomplete in p.
func checkAcked(t *testing.T, p *DB, acked []uint64) (lost int) {
	t.Helper()
	var want store.Batch
	for _, id := range acked {
		crashBatch(&want, id)
		ok := true
		for o := range want.All() {
			switch o.Kind {
			case store.OpPutRecord:
				rec, found, err := p.Record(id)
				ok = ok && err == nil && found && string(rec) == string(o.Data)
			case store.OpAdd:
				ids := storetest.IDs(t, p, o.Namespace, o.Data)
				_, found := slices.BinarySearch(ids, id)
				ok = ok && found
			}
		}
		if !ok {
			lost++
		}
	}
	return lost
}

// crashChild writes batches to the store in dir until it is killed (or 60 s pass, in
// case the parent died), writing each acknowledged id on its own line. In mode
// "write+sync" a goroutine picks the id and Writes under a lock, then Syncs outside it;
// in "apply" it Applies; in "write" it only Writes, which acknowledges too early.
func crashChild(dir, mode string) {
	base, _ := strconv.ParseUint(os.Getenv("STORE_CRASH_BASE"), 10, 64)
	d, err := Open(dir, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var next atomic.Uint64
	next.Store(base)
	var writeMu, outMu sync.Mutex
	for range 8 {
		go func() {
			var b store.Batch
			for {
				var id uint64
				switch mode {
				case "apply":
					id = next.Add(1)
					crashBatch(&b, id)
					if err := d.Apply(&b); err != nil {
						fail(err)
					}
				case "write+sync", "write":
					writeMu.Lock()
					id = next.Add(1)
					crashBatch(&b, id)
					err := d.Write(&b)
					writeMu.Unlock()
					if err != nil {
						fail(err)
					}
					if mode == "write+sync" {
						if err := d.Sync(); err != nil {
							fail(err)
						}
					}
				default:
					fail(fmt.Errorf("unknown mode %q", mode))
				}
				outMu.Lock()
				os.Stdout.WriteString(strconv.FormatUint(id, 10) + "\n") // unbuffered: one write
				outMu.Unlock()
			}
		}()
	}
	time.Sleep(60 * time.Second)
	os.Exit(3)
}
