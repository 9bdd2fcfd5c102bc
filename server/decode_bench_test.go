package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/minhash"
)

// BenchmarkDecodeDocument decodes a check-and-add body of 2 KB of text, as bench
// service sends them, by the fast path and by encoding/json (decodeStrict).
func BenchmarkDecodeDocument(b *testing.B) {
	text := strings.Repeat("The quick brown fox \"jumps\" over the lazy dog.\n", 42)
	q, _ := json.Marshal(text)
	body := []byte(`{"id":"doc-1000029","url":"https://bench.example/s29/1000029","text":` + string(q) + `}`)
	for _, bc := range []struct {
		name   string
		decode func([]byte, *documentJSON) error
	}{
		{"fastjson", decodeDocumentJSON},
		{"encoding-json", func(b []byte, dj *documentJSON) error { return decodeStrict(b, dj) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				var dj documentJSON
				if err := bc.decode(body, &dj); err != nil || dj.Text != text {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeQueryBatch decodes a batch of 16 raw queries, each a SimHash and a
// signature of 128 values, as bench service --mode query --batch 16 sends them, by the
// fast path and by encoding/json (decodeStrict).
func BenchmarkDecodeQueryBatch(b *testing.B) {
	sig := make(minhash.Signature, 128)
	for i := range sig {
		sig[i] = uint32(i) * 0x9e3779b9
	}
	var items []string
	for i := range 16 {
		items = append(items, fmt.Sprintf(`{"simhash":"%016x","minhash":"%s"}`, uint64(i)*0x9e3779b97f4a7c15, formatMinHash(sig)))
	}
	body := []byte(`{"queries":[` + strings.Join(items, ",") + `]}`)
	strict := func(body []byte) ([]neardup.Query, error) {
		var typed struct {
			Queries []queryJSON `json:"queries"`
		}
		if err := decodeStrict(body, &typed); err != nil {
			return nil, err
		}
		qs := make([]neardup.Query, len(typed.Queries))
		for i := range qs {
			var err error
			if qs[i], err = typed.Queries[i].query(); err != nil {
				return nil, err
			}
		}
		return qs, nil
	}
	for _, bc := range []struct {
		name   string
		decode func([]byte) ([]neardup.Query, error)
	}{
		{"fastjson", func(body []byte) ([]neardup.Query, error) {
			qs, _, err := decodeQueryBatch(body, 16)
			return qs, err
		}},
		{"encoding-json", strict},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				qs, err := bc.decode(body)
				if err != nil || len(qs) != 16 || len(qs[15].MinHash) != 128 {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTooDeep is the nesting scan every body goes through: over the document body
// of BenchmarkDecodeDocument, and over 20,000 unterminated "[", which took fastjson's
// validator 20 s of CPU.
func BenchmarkTooDeep(b *testing.B) {
	text := strings.Repeat("The quick brown fox \"jumps\" over the lazy dog.\n", 42)
	q, _ := json.Marshal(text)
	for _, bc := range []struct {
		name string
		body []byte
		deep bool
	}{
		{"document", []byte(`{"id":"doc-1000029","url":"https://bench.example/s29/1000029","text":` + string(q) + `}`), false},
		{"nested-20000", []byte(strings.Repeat("[", 20_000)), true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				if tooDeep(bc.body) != bc.deep {
					b.Fatal("wrong answer")
				}
			}
		})
	}
}
