package dedup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/internal/evaldata"
)

var realDocs struct {
	once sync.Once
	docs []neardup.Document
	err  error
}

// benchDocs returns 100,000 documents (10,000 with -short) of about 2 KB of synthetic English: a word-bigram
// model (evaldata.Markov) of the AEB article bodies (as neardup bench dedup makes them),
// every tenth document a copy of an earlier one with three words changed (a
// planted near-duplicate).
func benchDocs(b *testing.B) []neardup.Document {
	realDocs.once.Do(func() {
		root, err := evaldata.Root()
		if err != nil {
			realDocs.err = err
			return
		}
		articles, err := evaldata.AEB(root)
		if err != nil {
			realDocs.err = err
			return
		}
		var texts []string
		for _, a := range articles {
			texts = append(texts, a.Body)
		}
		m := evaldata.NewMarkov(texts)
		r := rand.New(rand.NewPCG(5, 5))
		var buf []byte
		n := 100_000
		if testing.Short() {
			n = 10_000 // CI runs every benchmark once with -short
		}
		for i := range n {
			var text string
			if i%10 == 9 {
				w := strings.Fields(realDocs.docs[r.IntN(i)].Text)
				for range 3 {
					w[r.IntN(len(w))] = "planted"
				}
				text = strings.Join(w, " ")
			} else {
				buf = m.AppendText(buf[:0], r, 2000)
				text = string(buf)
			}
			realDocs.docs = append(realDocs.docs, neardup.Document{ID: fmt.Sprint(i), Text: text})
		}
	})
	if realDocs.err != nil {
		evaldata.Need(b, realDocs.err)
	}
	return realDocs.docs
}

// BenchmarkRun deduplicates 100,000 documents of 2 KB of real text held in memory (no
// reading or writing: see neardup dedup for the whole run), by each method.
func BenchmarkRun(b *testing.B) {
	docs := benchDocs(b)
	size := 0
	for _, d := range docs {
		size += len(d.Text)
	}
	for _, m := range []neardup.Near{SimHash, MinHash} {
		b.Run(m.String(), func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				res, err := Run(source(docs), Options{Pipeline: neardup.Pipeline{Near: m}}, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(res.Summary().Dropped), "dropped")
			}
		})
	}
}

// BenchmarkAnnotate is the whole batch run as neardup dedup makes it, from reading a
// JSONL file of benchDocs to the output directory written (lists, corpus/, report), by
// the default method, plain and with DirOptions.Annotate, side by side on the same file:
// annotate mode writes every record with its fields instead of the kept ones.
func BenchmarkAnnotate(b *testing.B) {
	docs := benchDocs(b)
	dir := b.TempDir()
	input := filepath.Join(dir, "in.jsonl")
	var buf bytes.Buffer
	for _, d := range docs {
		line, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		buf.Write(append(line, '\n'))
	}
	if err := os.WriteFile(input, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, annotate := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "annotate"}[annotate], func(b *testing.B) {
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				r, err := corpus.Open([]string{input}, corpus.Options{})
				if err != nil {
					b.Fatal(err)
				}
				res, err := Run(func() (neardup.Document, error) {
					rec, err := r.Next()
					return neardup.Document{ID: rec.ID, Text: rec.Text}, err
				}, Options{}, nil)
				r.Close()
				if err != nil {
					b.Fatal(err)
				}
				sum, err := WriteDir(filepath.Join(dir, "out"), res, DirOptions{Force: true, Inputs: []string{input}, Annotate: annotate})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(sum.CorpusKept), "written")
			}
		})
	}
}
