package redisstore

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/neardup/neardup/store"
)

// BenchmarkPlan is the client's work to turn a detector's add into writes by bucket:
// some 50 postings, nearly all conditioned on the ids they held, and a record.
func BenchmarkPlan(b *testing.B) {
	db := &DB{prefix: "nd", buckets: 1 << 18}
	ordered := map[store.Namespace]bool{4: true}
	db.ordered.Store(&ordered)
	var bt store.Batch
	var conds []store.Cond
	post := func(ns store.Namespace, key []byte, id uint64, held ...uint64) {
		bt.Add(ns, key, id)
		conds = append(conds, store.Cond{Namespace: ns, Key: key, IDs: held})
	}
	const id = 123456789
	post(1, []byte("doc-123456789"), id)
	post(2, []byte("https://example.com/some/page/123456789"), id)
	post(3, make([]byte, 32), id, 99, 1000)
	bt.Add(4, binary.BigEndian.AppendUint64(nil, 1<<40), id)
	post(5, binary.BigEndian.AppendUint64(nil, 42), id)
	for i := range uint64(25) {
		post(6, binary.BigEndian.AppendUint64(nil, i*7919), id, i)
	}
	for i := range uint64(20) {
		post(8, fmt.Appendf(nil, "t%02d%08d", i, i*31), id)
	}
	bt.PutRecord(id, make([]byte, 2000))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := db.plan(&bt, conds); err != nil {
			b.Fatal(err)
		}
	}
}
