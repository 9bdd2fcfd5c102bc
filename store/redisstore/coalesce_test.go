package redisstore

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neardup/neardup/store"
	"github.com/neardup/neardup/store/storetest"
)

// TestCoalescer checks the group commit on its own: every request answered once, by
// the call it went in; never two calls in flight; a lone request sent at once, alone;
// and requests that arrive while a call is in flight gathered into one call.
func TestCoalescer(t *testing.T) {
	var inFlight, most, calls atomic.Int64
	var mu sync.Mutex
	var sizes []int
	answered := map[int]int{}
	var c coalescer[*int]
	c.send = func(rs []*int) {
		if n := inFlight.Add(1); n > most.Load() {
			most.Store(n)
		}
		calls.Add(1)
		time.Sleep(2 * time.Millisecond) // a round trip, during which others gather
		mu.Lock()
		sizes = append(sizes, len(rs))
		for _, r := range rs {
			answered[*r]++
			*r = -*r
		}
		mu.Unlock()
		inFlight.Add(-1)
	}
	const n = 400
	one := n + 1
	c.do(&one)
	if one != -(n+1) || calls.Load() != 1 || sizes[0] != 1 {
		t.Fatalf("a lone request: answered %d, %d calls of sizes %v; want %d, one call of 1", one, calls.Load(), sizes, -(n + 1))
	}
	var wg sync.WaitGroup
	for i := 1; i <= n; i++ {
		wg.Go(func() {
			r := i
			c.do(&r)
			if r != -i {
				t.Errorf("request %d returned before its call answered it (%d)", i, r)
			}
		})
	}
	wg.Wait()
	// The last call's next runs after its requests return: wait for the coalescer to
	// go idle.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		busy := c.busy
		c.mu.Unlock()
		if !busy || time.Now().After(deadline) {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= n; i++ {
		if answered[i] != 1 {
			t.Errorf("request %d answered %d times, want once", i, answered[i])
		}
	}
	if most.Load() != 1 {
		t.Errorf("%d calls in flight at once, want 1", most.Load())
	}
	if calls.Load() > n/4 {
		t.Errorf("%d calls for %d requests arriving together (sizes %v): they were not gathered", calls.Load(), n, sizes)
	}
}

// testCoalescedPrepares sends the prepares of several transactions in one call, as the
// coalescer does under load, and checks that each is answered on its own: of two
// conditioned on the same absent posting, the first in the call places its intent and
// the second finds it locked by the first; a condition that fails answers C for its
// transaction alone; a transaction on keys of its own passes. Then the first commits,
// and the second, prepared again, fails its condition: exactly one is applied.
func testCoalescedPrepares(t *testing.T, db *DB) {
	var seed store.Batch
	seed.Add(1, []byte("held"), 5)
	if err := db.Apply(&seed); err != nil {
		t.Fatal(err)
	}
	k, f := db.postingBucket(1, []byte("held"))
	resolved(t, db, []field{{k, f}}) // so that the seed holds no intent
	newTxnOf := func(key string, id uint64) *txn {
		var b store.Batch
		b.Add(1, []byte(key), id)
		b.PutRecord(id, []byte("rec"))
		ws, maxID, _, err := db.plan(&b, []store.Cond{{Namespace: 1, Key: []byte(key)}})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Microsecond) // distinct start times: the first is the older
		return &txn{db: db, id: newTxn(time.Now()), ws: ws, placed: make([]bool, len(ws)), maxID: maxID}
	}
	ts := []*txn{newTxnOf("same", 10), newTxnOf("same", 11), newTxnOf("held", 12), newTxnOf("own", 13)}
	rs := make([]*prepReq, len(ts))
	for i, x := range ts {
		rs[i] = &prepReq{t: x, pending: []int{0, 1}}
		if len(x.ws) != 2 {
			t.Fatalf("transaction %d writes %d buckets, want 2 (a posting, a record)", i, len(x.ws))
		}
	}
	db.sendPrepares(rs)
	byPosting := func(r *prepReq) string {
		for j, i := range r.pending {
			if r.t.ws[i].fields[0].ns >= 0 {
				return r.answers[j]
			}
		}
		return ""
	}
	for i, want := range []string{"OK", "L" + ts[0].id, "C", "OK"} {
		if rs[i].err != nil || !(byPosting(rs[i]) == want || want == "OK" && len(byPosting(rs[i])) > 2 && byPosting(rs[i])[:3] == "OK,") {
			t.Errorf("transaction %d in a coalesced prepare: posting answered %q (%v), want %q", i, byPosting(rs[i]), rs[i].err, want)
		}
	}
	for i, r := range rs {
		if _, err := r.t.placedBy(r.answers, r.pending); i == 2 && !errors.Is(err, store.ErrConflict) {
			t.Errorf("transaction 2's answers: %v, want ErrConflict", err)
		}
	}
	// The first commits and resolves; the second meets its intent no more, and its
	// condition (an empty posting) fails.
	if ok, err := ts[0].commit(); !ok || err != nil {
		t.Fatalf("commit of the first: %v, %v", ok, err)
	}
	db.remember(ts[0].id)
	if err := (resolutions{{txn: ts[0].id, commit: true, ws: ts[0].ws}}).run(t.Context(), db); err != nil {
		t.Fatal(err)
	}
	r := &prepReq{t: ts[1], pending: []int{0, 1}}
	db.sendPrepares([]*prepReq{r})
	if _, err := ts[1].placedBy(r.answers, r.pending); !errors.Is(err, store.ErrConflict) {
		t.Errorf("the second prepared again after the first committed: %v (%q), want ErrConflict", err, r.answers)
	}
	for _, x := range ts[1:] {
		for i := range x.placed {
			x.placed[i] = true
		}
		if err := x.abort(t.Context(), nil); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string][]uint64{"same": {10}, "held": {5}, "own": nil} {
		if ids := storetest.IDs(t, db, 1, []byte(key)); !slices.Equal(ids, want) {
			t.Errorf("%s holds %v, want %v", key, ids, want)
		}
	}
}

// testCoalescedRace has many goroutines of one store claim the same keys at once, so
// that their reads, prepares and commits coalesce: for each key exactly one claim wins,
// and the calls are fewer than the requests.
func testCoalescedRace(t *testing.T, db *DB) {
	var reqs, calls atomic.Int64
	send := db.preps.send
	db.preps.send = func(rs []*prepReq) {
		reqs.Add(int64(len(rs)))
		calls.Add(1)
		send(rs)
	}
	const races, claims = 40, 16
	for i := range races {
		url := fmt.Appendf(nil, "cu%d", i)
		var wg sync.WaitGroup
		var wins atomic.Int64
		for j := range claims {
			wg.Go(func() {
				id := uint64(claims*i + j + 1)
				for {
					ids, err := db.IDsMany([]store.Key{{Namespace: 1, Key: url}})
					if err != nil {
						t.Error(err)
						return
					}
					if len(ids[0]) > 0 {
						return // lost: the key has its one id
					}
					var b store.Batch
					b.Add(1, url, id)
					b.PutRecord(id, []byte("r"))
					err = db.ApplyIf(&b, []store.Cond{{Namespace: 1, Key: url}})
					if err == nil {
						wins.Add(1)
						return
					}
					if !errors.Is(err, store.ErrConflict) {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if ids := storetest.IDs(t, db, 1, url); wins.Load() != 1 || len(ids) != 1 {
			t.Fatalf("race %d: %d winners, the key holds %v; want 1 and one id", i, wins.Load(), ids)
		}
	}
	if calls.Load() >= reqs.Load() {
		t.Errorf("%d prepare calls for %d prepares of concurrent transactions: none coalesced", calls.Load(), reqs.Load())
	}
	t.Logf("%d prepares in %d calls", reqs.Load(), calls.Load())
}

// testCoalescedReads reads several readers' fields in one coalesced call and checks
// each reader gets its own, as a read of its own gives them: postings present and
// absent, and records, in buckets of every master.
func testCoalescedReads(t *testing.T, db *DB) {
	var b store.Batch
	for i := range uint64(30) {
		b.Add(store.Namespace(1+i%2), fmt.Appendf(nil, "r%d", i%11), i)
		b.PutRecord(i, fmt.Appendf(nil, "rec%d", i))
	}
	if err := db.Apply(&b); err != nil {
		t.Fatal(err)
	}
	var rs []*readReq
	for r := range 3 {
		var fs []field
		for i := range uint64(10 + 7*r) {
			k, f := db.postingBucket(store.Namespace(1+(i+uint64(r))%3), fmt.Appendf(nil, "r%d", i))
			fs = append(fs, field{k, f})
			k, f = db.recordBucket(i * uint64(r+1))
			fs = append(fs, field{k, f})
		}
		rs = append(rs, &readReq{fs: fs, out: make([]fieldValue, len(fs))})
		resolved(t, db, fs) // committed values, no intents
	}
	db.sendReads(rs)
	for r, req := range rs {
		if req.err != nil {
			t.Fatalf("reader %d: %v", r, req.err)
		}
		alone := &readReq{fs: req.fs, out: make([]fieldValue, len(req.fs))}
		db.sendReads([]*readReq{alone})
		if alone.err != nil || !slices.Equal(alone.out, req.out) {
			t.Errorf("reader %d read with others %v, alone %v (%v)", r, req.out, alone.out, alone.err)
		}
		if !slices.ContainsFunc(req.out, func(v fieldValue) bool { return v.has }) || !slices.ContainsFunc(req.out, func(v fieldValue) bool { return !v.has }) {
			t.Errorf("reader %d read %v: want fields present and absent", r, req.out)
		}
	}
}

// resolved resolves the process's committed transactions and waits until fields fs
// hold no intent (the timer's resolve of them may be in flight).
func resolved(t *testing.T, db *DB, fs []field) {
	t.Helper()
	if err := db.resolveLater(t.Context()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		vs, err := db.readFields(fs)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(vs, func(v fieldValue) bool { return v.txn != "" }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("intents left 5 s after their transactions committed")
		}
	}
}
