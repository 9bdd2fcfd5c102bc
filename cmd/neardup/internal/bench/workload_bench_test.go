package bench

import (
	"sync/atomic"
	"testing"
)

// BenchmarkClientRequest is the generator's own work for one request, without the
// network: the next body (prepared, or encoded when the pool has run out, batched or
// not) and the reading of a canned response. Its allocations are what the generator
// takes from the service's CPU on a shared machine; they must not grow.
func BenchmarkClientRequest(b *testing.B) {
	for _, bc := range []struct {
		name     string
		batch    int
		prepared int
		resp     string
	}{
		{"prepared", 1, 1 << 16, `{"verdict":"unique","added":false}`},
		{"encoded", 1, 0, `{"verdict":"unique","added":false}`},
		{"batch10", 10, 1 << 16, `{"results":[` + repeatJSON(`{"verdict":{"verdict":"unique","added":false}}`, 10) + `]}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			docs := SyntheticDocs(NewCorpus(1, 2000, 3, 0.1), 0.25)
			w := NewWorkload(WorkloadConfig{Docs: docs, Ops: []Op{OpCheck}, Batch: bc.batch, Clients: 1})
			if err := w.Prepare(bc.prepared, 0, new(atomic.Int64)); err != nil {
				b.Fatal(err)
			}
			c := w.clients[0]
			c.stats = newLoadStats()
			b.ReportAllocs()
			for b.Loop() {
				if w.docSeq.Load()+int64(bc.batch) > int64(bc.prepared) && bc.prepared > 0 {
					w.docSeq.Store(0)
				}
				_, body, _ := c.request(OpCheck)
				c.resp.Reset()
				c.resp.WriteString(bc.resp)
				c.count(OpCheck, bc.batch > 1)
				if len(body) == 0 {
					b.Fatal("empty body")
				}
			}
		})
	}
}

func repeatJSON(item string, n int) string {
	s := item
	for range n - 1 {
		s += "," + item
	}
	return s
}
