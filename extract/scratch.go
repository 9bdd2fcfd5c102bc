package extract

import (
	"sync"
	"unsafe"

	"golang.org/x/net/html"
)

// scratch holds the buffers one extraction uses and drops: the first slabs of the tree's
// nodes and attributes, the index of its elements, and the main and visible texts
// before normalization. They come to several times the page's size, and a service
// extracts a page a request: allocated anew, they were most of its garbage, and the
// collector's work with it. Pooled, a page of about the size of recent ones allocates
// none of them.
type scratch struct {
	nodes []html.Node
	attrs []html.Attribute
	els   []elem
	text  []byte // the main text, before normalize
	vis   []byte // the visible text, before normalize
}

// maxScratch bounds the bytes of one buffer a pooled scratch keeps: one huge page
// should not pin its buffers.
const maxScratch = 4 << 20

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// put clears what holds pointers into the page just read (the texts hold none), so
// that the pool does not keep it alive, and returns sc to the pool.
func (sc *scratch) put() {
	clear(sc.nodes)
	clear(sc.attrs)
	clear(sc.els)
	sc.nodes, sc.attrs, sc.els = emptied(sc.nodes), emptied(sc.attrs), emptied(sc.els)
	sc.text, sc.vis = emptied(sc.text), emptied(sc.vis)
	scratchPool.Put(sc)
}

// emptied returns s with length 0, or nil when its array is over maxScratch bytes.
func emptied[T any](s []T) []T {
	if cap(s)*int(unsafe.Sizeof(*new(T))) > maxScratch {
		return nil
	}
	return s[:0]
}

// normalizeBytes is normalize of b, which it does not keep: normalize copies what it
// returns, so b may be a scratch buffer written again afterwards.
func normalizeBytes(b []byte) string { return normalize(unsafe.String(unsafe.SliceData(b), len(b))) }
