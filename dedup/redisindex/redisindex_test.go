package redisindex

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/internal/redistest"
)

// TestCluster starts one Redis Cluster for every test of the package, each under a run
// name of its own.
func TestCluster(t *testing.T) {
	c := redistest.Start(t)
	t.Run("ShardsMatchSingleRun", func(t *testing.T) { testShardsMatchSingleRun(t, c) })
	t.Run("ShardErrors", func(t *testing.T) { testShardErrors(t, c) })
	t.Run("Drop", func(t *testing.T) { testDrop(t, c) })
}

// testInputs returns a corpus as inputs (lists of documents, as files would be): a dense
// cloud, whose pairs spread around the threshold where verification decides, with exact
// copies (other case) and documents without words, shuffled so that duplicates fall in
// other inputs than their originals.
func testInputs(n, inputs int) [][]neardup.Document {
	cloud, _ := evaldata.DenseCloud(11, n, 1)
	r := rand.New(rand.NewPCG(5, 6))
	var docs []neardup.Document
	for i, d := range cloud {
		docs = append(docs, neardup.Document{ID: d.ID, Text: d.Text, Priority: float64(r.IntN(3))})
		switch i % 9 {
		case 2:
			docs = append(docs, neardup.Document{ID: d.ID + "-copy", Text: strings.ToUpper(d.Text)})
		case 5:
			docs = append(docs, neardup.Document{ID: d.ID + "-nowords", Text: "... !!"})
		}
	}
	r.Shuffle(len(docs), func(i, j int) { docs[i], docs[j] = docs[j], docs[i] })
	out := make([][]neardup.Document, inputs)
	for i, d := range docs {
		k := i * inputs / len(docs)
		out[k] = append(out[k], d)
	}
	return out
}

// single is a Run over every input in order.
func single(t *testing.T, in [][]neardup.Document, opt dedup.Options) *dedup.Result {
	var all []neardup.Document
	for _, docs := range in {
		all = append(all, docs...)
	}
	i := 0
	res, err := dedup.Run(func() (neardup.Document, error) {
		if i == len(all) {
			return neardup.Document{}, io.EOF
		}
		i++
		return all[i-1], nil
	}, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// shardSource yields the inputs k with k mod shards == shard, with their positions.
func shardSource(in [][]neardup.Document, shard, shards int) dedup.PosSource {
	k, i := shard, 0
	return func() (neardup.Document, uint64, error) {
		for k < len(in) && i == len(in[k]) {
			k, i = k+shards, 0
		}
		if k >= len(in) {
			return neardup.Document{}, 0, io.EOF
		}
		i++
		return in[k][i-1], dedup.Position(k, i-1), nil
	}
}

func open(t *testing.T, c *redistest.Cluster, run string, shard, shards int) *Index {
	x, err := Open(context.Background(), Options{Addrs: c.Addrs, Prefix: "t", Run: run, Shard: shard, Shards: shards, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}

// runShards runs shards shards of run concurrently, each after a random delay so that
// they reach the barriers in any order, and returns them read back from their files.
func runShards(t *testing.T, c *redistest.Cluster, run string, in [][]neardup.Document, shards int, opt func(i int) dedup.Options) ([]*dedup.Shard, []error) {
	out := make([]*dedup.Shard, shards)
	errs := make([]error, shards)
	var wg sync.WaitGroup
	for i := range shards {
		x := open(t, c, run, i, shards)
		wg.Go(func() {
			time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			sh, err := dedup.RunShard(ctx, shardSource(in, i, shards), opt(i), dedup.ShardOptions{Run: run, Shard: i, Shards: shards, Index: x}, nil)
			if err != nil {
				errs[i] = err
				return
			}
			var b bytes.Buffer
			if _, err := sh.WriteTo(&b); err != nil {
				errs[i] = err
				return
			}
			out[i], errs[i] = dedup.ReadShard(&b)
		})
	}
	wg.Wait()
	return out, errs
}

// lists is what a run writes that must not depend on how it was spread.
func lists(t *testing.T, r *dedup.Result) map[string]string {
	out := map[string]string{}
	for name, f := range map[string]func(io.Writer) error{
		"keep": func(w io.Writer) error { return r.WriteIDs(w, true) }, "drop": func(w io.Writer) error { return r.WriteIDs(w, false) },
		"pairs": r.WritePairs, "clusters": r.WriteClusters,
	} {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		out[name] = b.String()
	}
	out["summary"] = fmt.Sprintf("%+v", r.Summary())
	return out
}

// testShardsMatchSingleRun runs three shards against a real Redis Cluster and checks that
// their merge writes byte for byte what one Run over the same inputs writes, for the
// default method and for containment with another keep policy, with many exact and near
// duplicates across shards.
func testShardsMatchSingleRun(t *testing.T, c *redistest.Cluster) {
	in := testInputs(300, 7)
	for name, opt := range map[string]dedup.Options{
		"default": {},
		"containment-longest": {Containment: true, Pipeline: neardup.Pipeline{Near: dedup.MinHash, Threshold: 0.7,
			Keep: neardup.KeepPolicy{neardup.KeepLongest, neardup.KeepFirstSeen}}},
		"priority": {Pipeline: neardup.Pipeline{Threshold: 0.6, Keep: neardup.KeepPolicy{neardup.KeepPriority, neardup.KeepFirstSeen}}},
		"exact":    {Pipeline: neardup.Pipeline{Near: dedup.Exact}},
	} {
		t.Run(name, func(t *testing.T) {
			want := lists(t, single(t, in, opt))
			if !strings.Contains(want["pairs"], `"minhash"`) && opt.Near != dedup.Exact || !strings.Contains(want["pairs"], `"exact"`) {
				t.Fatalf("the corpus lacks near or exact pairs:\n%.500s", want["pairs"])
			}
			shards, errs := runShards(t, c, "match-"+name, in, 3, func(int) dedup.Options { return opt })
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			// Any order of the shards merges the same.
			shards[0], shards[2] = shards[2], shards[0]
			res, err := dedup.Merge(shards)
			if err != nil {
				t.Fatal(err)
			}
			got := lists(t, res)
			for _, f := range []string{"keep", "drop", "pairs", "clusters", "summary"} {
				if got[f] != want[f] {
					t.Errorf("%s differs from the single run's:\n got %.400s\nwant %.400s", f, got[f], want[f])
				}
			}
		})
	}
}

// testShardErrors checks the failures a user can cause: shards of one run with other
// options, a shard missing or given twice at the merge, and a cluster that is not there.
func testShardErrors(t *testing.T, c *redistest.Cluster) {
	in := testInputs(60, 4)
	_, errs := runShards(t, c, "mixed", in, 2, func(i int) dedup.Options {
		return dedup.Options{Pipeline: neardup.Pipeline{Threshold: 0.5 + 0.2*float64(i)}}
	})
	// One shard joins first; the other fails to join, and the first's wait ends.
	if !(errors.Is(errs[0], dedup.ErrShardMismatch) && errors.Is(errs[1], ErrAborted) ||
		errors.Is(errs[1], dedup.ErrShardMismatch) && errors.Is(errs[0], ErrAborted)) {
		t.Errorf("shards with other thresholds: %v, want ErrShardMismatch and ErrAborted", errs)
	}

	shards, errs := runShards(t, c, "missing", in, 3, func(int) dedup.Options { return dedup.Options{} })
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if _, err := dedup.Merge(shards[:2]); !errors.Is(err, dedup.ErrShardMissing) || !strings.Contains(err.Error(), "shard 2 ") {
		t.Errorf("merge without shard 2: %v", err)
	}
	if _, err := dedup.Merge([]*dedup.Shard{shards[0], shards[1], shards[1]}); !errors.Is(err, dedup.ErrShardMissing) {
		t.Errorf("merge with shard 1 twice: %v", err)
	}
	other, errs := runShards(t, c, "other", in, 3, func(int) dedup.Options { return dedup.Options{} })
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if _, err := dedup.Merge([]*dedup.Shard{shards[0], shards[1], other[2]}); !errors.Is(err, dedup.ErrShardMismatch) {
		t.Errorf("merge across runs: %v", err)
	}

	far := func() (neardup.Document, uint64, error) {
		return neardup.Document{ID: "a", Text: "some words"}, dedup.Position(1<<20, 0), nil
	}
	_, err := dedup.RunShard(context.Background(), far, dedup.Options{}, dedup.ShardOptions{Run: "far", Shards: 1, Index: open(t, c, "far", 0, 1)}, nil)
	if !errors.Is(err, dedup.ErrOptions) || !strings.Contains(err.Error(), "2^20 inputs") {
		t.Errorf("a position past 2^52: %v", err)
	}

	_, err = Open(context.Background(), Options{Addrs: []string{"127.0.0.1:1"}, Run: "x", Shards: 1})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the Redis Cluster at 127.0.0.1:1") {
		t.Errorf("unreachable cluster: %v", err)
	}
	if _, err := Open(context.Background(), Options{Addrs: c.Addrs, Run: "a b", Shards: 1}); !errors.Is(err, ErrOptions) {
		t.Errorf("run name with a space: %v", err)
	}
}

// testDrop checks that Drop removes every key of a run and no other.
func testDrop(t *testing.T, c *redistest.Cluster) {
	in := testInputs(40, 2)
	for _, run := range []string{"drop-a", "drop-b"} {
		if _, errs := runShards(t, c, run, in, 2, func(int) dedup.Options { return dedup.Options{} }); errors.Join(errs...) != nil {
			t.Fatal(errors.Join(errs...))
		}
	}
	a, b := open(t, c, "drop-a", 0, 1), open(t, c, "drop-b", 0, 1)
	ctx := context.Background()
	count := func(x *Index) int {
		var n atomic.Int64 // ForEachMaster calls on every master at once
		x.c.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error {
			keys, err := cl.Keys(ctx, x.keys+"*").Result()
			n.Add(int64(len(keys)))
			return err
		})
		return int(n.Load())
	}
	if count(a) == 0 || count(b) == 0 {
		t.Fatal("the runs wrote no keys")
	}
	if err := a.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(a); n != 0 {
		t.Errorf("%d keys of the dropped run remain", n)
	}
	if count(b) == 0 {
		t.Error("Drop removed another run's keys")
	}
}

// FuzzDecodeDoc checks that any value decodes or fails cleanly, and that what decodes
// encodes to a value that decodes the same.
func FuzzDecodeDoc(f *testing.F) {
	f.Add(encodeDoc(nil, &dedup.SharedDoc{Signature: []uint32{1, 2, 3}, Set: []uint32{4, 9, 1 << 31}}))
	f.Add(encodeDoc(nil, &dedup.SharedDoc{}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDoc(b)
		if err != nil {
			return
		}
		again, err := decodeDoc(encodeDoc(nil, &d))
		if err != nil || !slices.Equal(again.Signature, d.Signature) || !slices.Equal(again.Set, d.Set) {
			t.Fatalf("%x decodes to %v, which encodes to %v (%v)", b, d, again, err)
		}
	})
}
