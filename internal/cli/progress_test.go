package cli

import (
	"bytes"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup/corpus"
)

func TestProgress(t *testing.T) {
	var out bytes.Buffer
	var docs atomic.Int64
	stats := func() corpus.Stats { return corpus.Stats{Bytes: 1 << 20, Total: 4 << 20} }
	p := newProgress(&out, true, stats, &docs)
	p.stage("reading")
	docs.Store(1234)
	p.update()
	p.done()
	if s := out.String(); !strings.Contains(s, "reading") || !strings.Contains(s, "1234 docs") || !strings.Contains(s, "25%") || !strings.Contains(s, "B/s") {
		t.Fatalf("progress bar %q", s)
	}
	out.Reset()
	q := newProgress(&out, false, stats, &docs)
	q.stage("x")
	q.done()
	if out.Len() != 0 || isTerminal(&out) {
		t.Fatal("a hidden bar wrote, or a buffer is a terminal")
	}
}

func TestCountProgress(t *testing.T) {
	var out bytes.Buffer
	var n atomic.Int64
	var p *progress
	p = newCountProgress(&out, true, 200, n.Load, func() string { return p.stageName() + " requests" })
	p.stage("warmup")
	n.Store(50)
	p.update()
	p.done()
	if s := out.String(); !strings.Contains(s, "warmup requests") || !strings.Contains(s, "25%") || strings.Contains(s, "B/s") {
		t.Fatalf("progress bar %q", s)
	}
}
