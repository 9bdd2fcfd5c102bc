package redisstore

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/internal/redistest"
	"github.com/neardup/neardup/minhash"
)

// BenchmarkFloor is what the least a shared index can do per add costs Redis, as a
// bound on any layout that, like this store's, posts some 50 keys a document (25 band
// keys, 20 SimHash-table keys, id, URL, main text, last seen, SimHash) into buckets of
// some 50 fields: the same cluster as BenchmarkShared, the same bucket sizing, 32
// goroutines, and each op one add's 50 postings, each in a random bucket. No
// transaction, no condition, no intent: what is left is the commands themselves, their
// replication and the AOF. Variants:
//
//   - write: one unconditional HSET a posting, pipelined (what a store that trusted
//     every writer would send);
//   - script-write: the same HSETs from a script, one call a master for 8 adds at once
//     (the grouping the store's coalesced calls reach under 32 clients);
//   - script-read-write: an HGET and an HSET a posting in such a call, the least a
//     conditional write (compare, then set) costs; the store's scripts add intents
//     and their resolution to this;
//   - script-read: 46 HGETs an op (a raw query's band and table keys), 8 ops a call.
//
// It reports the masters', the replicas' and this process's CPU an add (or query).
func BenchmarkFloor(b *testing.B) {
	c := redistest.Start(b)
	for _, v := range []floorVariant{
		{"write", nil, 50, 1, false},
		{"script-write", floorWriteScript, 50, 8, false},
		{"script-read-write", floorReadWriteScript, 50, 8, false},
		{"script-read", floorReadScript, 46, 8, true},
	} {
		b.Run(v.name, func(b *testing.B) {
			db, err := Open(Options{Addrs: c.Addrs, Prefix: "floor" + v.name, Buckets: 64})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			buckets := 64
			for buckets < b.N {
				buckets *= 2
			}
			floorRun(b, db, buckets, v)
		})
	}
}

// floorVariant is one of BenchmarkFloor's loads: script run on each op's postings (nil
// for plain pipelined HSETs), fields postings an op, group ops a call, and whether the
// buckets are filled first (untimed) as the writes fill theirs, for a load that reads.
type floorVariant struct {
	name          string
	script        *script
	fields, group int
	fill          bool
}

// floorRun runs b.N ops of v from 32 goroutines and reports the CPU each op took.
func floorRun(b *testing.B, db *DB, buckets int, v floorVariant) {
	ctx := context.Background()
	fields := v.fields
	prefix := db.opt.Prefix + ":{s"
	var next atomic.Int64
	op := func(r *rand.Rand, ops int, s *script) error {
		keys := make([]string, 0, ops*fields)
		args := make([]string, 0, 2*ops*fields)
		for range ops {
			id := strconv.FormatInt(next.Add(1), 10)
			for range fields {
				keys = append(keys, prefix+strconv.Itoa(r.IntN(buckets))+"}")
				f := binary.BigEndian.AppendUint64([]byte{6}, r.Uint64())
				args = append(args, string(f), id)
			}
		}
		if s == nil {
			_, err := db.c.Pipelined(ctx, func(p redis.Pipeliner) error {
				for i, k := range keys {
					p.HSet(ctx, k, args[2*i], args[2*i+1])
				}
				return nil
			})
			return err
		}
		groups := db.groupByMaster(ctx, len(keys), func(i int) string { return keys[i] })
		cmds, err := db.pipelined(ctx, func(p redis.Pipeliner) {
			for _, g := range groups {
				argv := make([]any, 0, 3*len(g))
				for _, i := range g {
					argv = append(argv, keys[i], args[2*i], args[2*i+1])
				}
				s.run(ctx, p, []string{keys[g[0]]}, argv...)
			}
		})
		for _, c := range cmds {
			if err == nil {
				err = c.Err()
			}
		}
		return err
	}
	if v.fill {
		r := rand.New(rand.NewPCG(0, 3))
		for i := 0; i < b.N; i += 8 {
			if err := op(r, 8, floorWriteScript); err != nil {
				b.Fatal(err)
			}
		}
	}
	m0, r0 := usedCPU(b, db, false), usedCPU(b, db, true)
	u0, s0, _ := procstat.CPUTime()
	b.SetParallelism(16)
	b.ResetTimer()
	var seed atomic.Uint64
	b.RunParallel(func(pb *testing.PB) {
		r := rand.New(rand.NewPCG(seed.Add(1), 3))
		for {
			n := 0
			for n < v.group && pb.Next() {
				n++
			}
			if n == 0 {
				return
			}
			if err := op(r, n, v.script); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	u1, s1, _ := procstat.CPUTime()
	m1, r1 := usedCPU(b, db, false), usedCPU(b, db, true)
	per := func(d float64) float64 { return d * 1e6 / float64(b.N) }
	b.ReportMetric(per(m1[0]+m1[1]-m0[0]-m0[1]), "redis-cpu-µs/op")
	b.ReportMetric(per(r1[0]+r1[1]-r0[0]-r0[1]), "replica-cpu-µs/op")
	b.ReportMetric(per((u1 + s1 - u0 - s0).Seconds()), "proc-cpu-µs/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// The floor's scripts: ARGV are (bucket, field, value) triples, the buckets all of the
// master the call goes to.
var (
	floorWriteScript = newScript(`#!lua flags=allow-cross-slot-keys
for i = 1, #ARGV, 3 do redis.call('HSET', ARGV[i], ARGV[i + 1], ARGV[i + 2]) end
return 1
`)
	floorReadWriteScript = newScript(`#!lua flags=allow-cross-slot-keys
for i = 1, #ARGV, 3 do
  local v = redis.call('HGET', ARGV[i], ARGV[i + 1])
  if v ~= ARGV[i + 2] then redis.call('HSET', ARGV[i], ARGV[i + 1], ARGV[i + 2]) end
end
return 1
`)
	floorReadScript = newScript(`#!lua flags=no-writes,allow-cross-slot-keys
local out = {}
for i = 1, #ARGV, 3 do out[#out + 1] = redis.call('HGET', ARGV[i], ARGV[i + 1]) end
return out
`)
)

// BenchmarkFloorMemory is the least memory a stored document's record can take, as a
// bound on any encoding of it: BenchmarkShared's documents fingerprinted by a verifying
// detector (no Redis), with the bytes of each part of the record's binary form
// (api.Entry) an op, and the information bound of its sketch (setBits). Variants: the
// default, a smaller sketch (Options.SketchCap 128, a bottom-k estimate) and none
// (Options.NoVerify).
func BenchmarkFloorMemory(b *testing.B) {
	for _, v := range []struct {
		name string
		opt  neardup.Options
	}{
		{"default", neardup.Options{}},
		{"sketch-128", neardup.Options{SketchCap: 128}},
		{"no-verify", neardup.Options{NoVerify: true}},
	} {
		b.Run(v.name, func(b *testing.B) {
			d, err := neardup.NewDetector(v.opt)
			if err != nil {
				b.Fatal(err)
			}
			f := d.Fingerprinter()
			var record, sketch, bound, signature, hashes float64
			var buf []byte
			for i := range b.N {
				doc := benchDoc(int64(i + 1))
				fp, err := f.Fingerprint(doc)
				if err != nil {
					b.Fatal(err)
				}
				e := neardup.Entry{ID: doc.ID, Fingerprints: fp}
				if buf, err = e.AppendBinary(buf[:0]); err != nil {
					b.Fatal(err)
				}
				record += float64(len(buf))
				if !fp.Sketch.Empty() {
					s, _ := fp.Sketch.AppendBinary(nil)
					sketch += float64(len(s))
					bound += setBits(fp.Sketch) / 8
				}
				signature += float64(4 * len(fp.MinHash))
				hashes += float64(len(fp.Raw) + len(fp.Text) + len(fp.Main) + 8)
			}
			n := float64(b.N)
			b.ReportMetric(record/n, "record-B/doc")
			b.ReportMetric(sketch/n, "sketch-B/doc")
			b.ReportMetric(bound/n, "sketch-bound-B/doc")
			b.ReportMetric(signature/n, "signature-B/doc")
			b.ReportMetric(hashes/n, "hashes-B/doc")
		})
	}
}

// setBits returns the least bits any encoding of s takes on average: log2 C(u, n) for
// its n distinct hashes out of the u values they may take, 2^32, or for a sampled
// sketch, whose hashes are the smallest, those up to its largest (a bound a little
// low: that largest is not free).
func setBits(s minhash.Sketch) float64 {
	n, u := len(s.Hashes), math.Exp2(32)
	if s.Sampled {
		u = float64(s.Hashes[n-1]) + 1
	}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	return (lg(u+1) - lg(float64(n)+1) - lg(u-float64(n)+1)) / math.Ln2
}
