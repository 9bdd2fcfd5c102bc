package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/store/pebblestore"
)

// roundTrips counts the calls a client makes to the cluster, a pipeline counting once:
// the round trips a caller waits for one after the other (a pipeline's nodes answer in
// parallel).
type roundTrips struct{ n, cmds, recs, later atomic.Int64 }

func (r *roundTrips) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *roundTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.n.Add(1); r.cmds.Add(1); return next(ctx, cmd) }
}
func (r *roundTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		r.n.Add(1)
		if !slices.ContainsFunc(cmds, func(c redis.Cmder) bool {
			a := c.Args()
			return len(a) < 4 || a[1] != readManyScript.sha || !strings.Contains(fmt.Sprint(a[3]), ":{r")
		}) {
			r.recs.Add(1) // a pipeline of reads of records alone: candidates read apart
		}
		if !slices.ContainsFunc(cmds, func(c redis.Cmder) bool {
			a := c.Args()
			return !(a[0] == "expire" || a[0] == "incrby" || len(a) > 1 && a[1] == resolveManyScript.sha)
		}) {
			r.later.Add(1) // resolves and counts alone: what no add waits for
		}
		r.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// BenchmarkShared is a detector's check-and-add over a real local cluster (three masters,
// one replica each, on this machine), from 32 goroutines, on documents of 300 words of
// which one in ten is a near copy of an earlier one. It reports adds a second, the
// pipelines the process sends for each (rt/op: a pipeline to several masters counts
// once, and one that carries several adds' calls once for them all; record-rt/op of them
// the reads of candidates' records apart, background-rt/op the resolves and counts sent
// alone after 20 ms without a write, which no add waits for), the calls of the
// coalesced phases each add waits for (waits/op: a round trip each, once the call in
// flight has come back) and how many adds' requests a call of each phase carries
// (read-, prep- and commit-reqs/call), the commands in the pipelines (cmds/op), the
// masters' memory it takes (redis-B/doc, and by kind of key), the masters' CPU time it
// takes (redis-cpu-µs/doc), the replicas' (replica-cpu-µs/doc), the bytes the masters
// read from their clients and wrote to them (net-in-B/doc and net-out-B/doc) and to
// their replicas (repl-B/doc), and this process's
// own, the detector and the store's client (proc-cpu-µs/doc, user and system, over the
// timed documents). The store has a bucket for every document, as Options.Buckets
// advises (some 50 postings a bucket at the end).
func BenchmarkShared(b *testing.B) { benchShared(b, 32) }

// BenchmarkSharedOne is BenchmarkShared from one goroutine: an add's latency (ns/op)
// and cost when no other add shares its calls.
func BenchmarkSharedOne(b *testing.B) { benchShared(b, 1) }

func benchShared(b *testing.B, clients int) {
	c := redistest.Start(b)
	buckets := 64
	for buckets < b.N {
		buckets *= 2
	}
	db, err := Open(Options{Addrs: c.Addrs, Prefix: "bench", Buckets: buckets})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rt := &roundTrips{}
	db.c.AddHook(rt)
	var reqs, calls [3]atomic.Int64
	countSends(&db.reads, &reqs[0], &calls[0])
	countSends(&db.preps, &reqs[1], &calls[1])
	countSends(&db.commits, &reqs[2], &calls[2])
	d, err := neardup.OpenDetector(db, neardup.Options{})
	if err != nil {
		b.Fatal(err)
	}
	d.Prescreen() // waits for the pre-screen's first fill, which a detector starts as it opens
	mem0, cpu0, rcpu0, stats0 := usedMemory(b, db), usedCPU(b, db, false), usedCPU(b, db, true), commandStats(b, db)
	net0 := nodeInfo(b, db, false)
	start, cmds, recs, later := rt.n.Load(), rt.cmds.Load(), rt.recs.Load(), rt.later.Load()
	proc := checkAll(b, d, clients)
	b.ReportMetric(float64(proc.Microseconds())/float64(b.N), "proc-cpu-µs/doc")
	b.ReportMetric(float64(rt.n.Load()-start)/float64(b.N), "rt/op")
	b.ReportMetric(float64(rt.cmds.Load()-cmds)/float64(b.N), "cmds/op")
	b.ReportMetric(float64(rt.recs.Load()-recs)/float64(b.N), "record-rt/op")
	b.ReportMetric(float64(rt.later.Load()-later)/float64(b.N), "background-rt/op")
	waits := 0.0
	for i, phase := range []string{"read", "prep", "commit"} {
		waits += float64(reqs[i].Load()) / float64(b.N)
		b.ReportMetric(float64(reqs[i].Load())/float64(max(1, calls[i].Load())), phase+"-reqs/call")
	}
	b.ReportMetric(waits, "waits/op")
	if err := db.resolveLater(context.Background()); err != nil { // the last writes' intents
		b.Fatal(err)
	}
	b.ReportMetric(float64(usedMemory(b, db)-mem0)/float64(b.N), "redis-B/doc")
	cpu, rcpu := usedCPU(b, db, false), usedCPU(b, db, true)
	b.ReportMetric((cpu[0]+cpu[1]-cpu0[0]-cpu0[1])*1e6/float64(b.N), "redis-cpu-µs/doc")
	b.ReportMetric((cpu[1]-cpu0[1])*1e6/float64(b.N), "redis-sys-µs/doc")
	b.ReportMetric((rcpu[0]+rcpu[1]-rcpu0[0]-rcpu0[1])*1e6/float64(b.N), "replica-cpu-µs/doc")
	net := nodeInfo(b, db, false)
	for k, name := range map[string]string{"total_net_input_bytes": "net-in-B/doc", "total_net_output_bytes": "net-out-B/doc", "total_net_repl_output_bytes": "repl-B/doc"} {
		b.ReportMetric((net[k]-net0[k])/float64(b.N), name)
	}
	for name, s := range commandStats(b, db) {
		s0 := stats0[name]
		if calls := float64(s[0]-s0[0]) / float64(b.N); calls >= 0.5 {
			b.ReportMetric(calls, name+"-calls/doc")
			b.ReportMetric(float64(s[1]-s0[1])/float64(b.N), name+"-µs/doc")
		}
	}
	for kind, n := range keyMemory(b, db) {
		b.ReportMetric(float64(n)/float64(b.N), kind+"-B/doc")
	}
}

// countSends counts the requests c sends and the calls they go in.
func countSends[R any](c *coalescer[R], reqs, calls *atomic.Int64) {
	send := c.send
	c.send = func(rs []R) {
		reqs.Add(int64(len(rs)))
		calls.Add(1)
		send(rs)
	}
}

// BenchmarkSharedPebble is BenchmarkShared's load on a detector over pebblestore in a
// temporary directory, one process holding the store: what the shared store is to be
// compared with, this process's CPU a document (proc-cpu-µs/doc) included.
func BenchmarkSharedPebble(b *testing.B) {
	st, err := pebblestore.Open(b.TempDir(), pebblestore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	d, err := neardup.OpenDetector(st, neardup.Options{})
	if err != nil {
		b.Fatal(err)
	}
	proc := checkAll(b, d, 32)
	b.ReportMetric(float64(proc.Microseconds())/float64(b.N), "proc-cpu-µs/doc")
}

// checkAll checks and adds b.N documents (benchDoc) through d from clients goroutines
// (1, or a multiple of GOMAXPROCS), reports adds a second, and returns the CPU time this
// process spent meanwhile.
func checkAll(b *testing.B, d *neardup.Detector, clients int) time.Duration {
	var next atomic.Int64
	check := func() bool {
		if _, err := d.Check(benchDoc(next.Add(1))); err != nil {
			b.Error(err)
			return false
		}
		return true
	}
	b.ResetTimer()
	u0, s0, _ := procstat.CPUTime()
	if clients == 1 {
		for i := 0; i < b.N && check(); i++ {
		}
	} else {
		b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() && check() {
			}
		})
	}
	b.StopTimer()
	u1, s1, _ := procstat.CPUTime()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "adds/s")
	return u1 + s1 - u0 - s0
}

// benchDoc returns document i of the benchmarks: 300 words, one in ten a near copy of
// an earlier one.
func benchDoc(i int64) neardup.Document {
	r := rand.New(rand.NewPCG(uint64(i), 2))
	if i > 10 && r.IntN(10) == 0 {
		r = rand.New(rand.NewPCG(uint64(r.Int64N(i)), 2)) // a near copy of an earlier one
	}
	w := make([]string, 300)
	for j := range w {
		w[j] = fmt.Sprintf("w%d", r.IntN(50000))
	}
	w[0] = fmt.Sprintf("v%d", i)
	return neardup.Document{ID: fmt.Sprint(i), URL: fmt.Sprintf("https://example.com/%d", i), Text: strings.Join(w, " ")}
}

// keyMemory sums MEMORY USAGE over the store's keys by kind: record buckets, posting
// buckets, transaction statuses, and the rest (intents, counters).
func keyMemory(b *testing.B, db *DB) map[string]int64 {
	ctx := context.Background()
	keys, err := db.scan(ctx, ":*")
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for _, k := range keys {
		kind := "other"
		switch bk, _, ok := db.parseBucket(k); {
		case ok && bk == kindRecord:
			kind = "record"
		case ok:
			kind = "posting"
		case strings.HasSuffix(k, "}:t"):
			kind = "status"
		}
		n, err := db.c.MemoryUsage(ctx, k, 0).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			b.Fatal(err)
		}
		out[kind] += n
	}
	return out
}

// usedCPU sums the CPU seconds of the masters, or of the replicas (INFO cpu):
// used_cpu_user, then used_cpu_sys (the kernel's share: sockets, the AOF).
func usedCPU(b *testing.B, db *DB, replicas bool) [2]float64 {
	info := nodeInfo(b, db, replicas)
	return [2]float64{info["used_cpu_user"], info["used_cpu_sys"]}
}

// nodeInfo sums the numeric fields of INFO cpu and INFO stats over the masters, or
// over the replicas. It asks each node the store was opened with (the benchmarks give
// every node) for its role, rather than trust the cluster client's map, which may lack
// a replica for a while after the cluster starts.
func nodeInfo(b *testing.B, db *DB, replicas bool) map[string]float64 {
	total := map[string]float64{}
	for _, addr := range db.opt.Addrs {
		n := redis.NewClient(&redis.Options{Addr: addr})
		info, err := n.InfoMap(context.Background(), "cpu", "stats", "replication").Result()
		n.Close()
		if err != nil {
			b.Fatal(err)
		}
		if (info["Replication"]["role"] == "master") == replicas {
			continue
		}
		for _, section := range []string{"CPU", "Stats"} {
			for k, v := range info[section] {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					total[k] += f
				}
			}
		}
	}
	return total
}

// usedMemory sums used_memory (INFO memory) over the masters.
func usedMemory(b *testing.B, db *DB) int64 {
	var total atomic.Int64
	err := db.c.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error {
		info, err := n.InfoMap(ctx, "memory").Result()
		if err != nil {
			return err
		}
		v, err := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
		total.Add(v)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total.Load()
}

// commandStats sums INFO commandstats over the masters: for each command, its calls and
// the µs spent in it (a script's inner commands count under their own names as well as
// in the script's).
func commandStats(b *testing.B, db *DB) map[string][2]int64 {
	var mu sync.Mutex
	out := map[string][2]int64{}
	err := db.c.ForEachMaster(context.Background(), func(ctx context.Context, n *redis.Client) error {
		info, err := n.InfoMap(ctx, "commandstats").Result()
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		for k, v := range info["Commandstats"] {
			var s [2]int64
			for f := range strings.SplitSeq(v, ",") {
				name, val, _ := strings.Cut(f, "=")
				switch name {
				case "calls":
					s[0], _ = strconv.ParseInt(val, 10, 64)
				case "usec":
					s[1], _ = strconv.ParseInt(val, 10, 64)
				}
			}
			name := strings.TrimPrefix(k, "cmdstat_")
			out[name] = [2]int64{out[name][0] + s[0], out[name][1] + s[1]}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
