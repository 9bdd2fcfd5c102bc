package server

import (
	"encoding/json"
	"strings"
	"testing"
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
