package server

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// TestStringStop holds stringStop's 8-byte steps to a byte at a time, for every start
// and every stopping byte at every place in a word, after plain bytes of every kind
// (high bytes among them, whose borrows the 8-byte test must not take for a stop).
func TestStringStop(t *testing.T) {
	ref := func(b []byte, i int) int {
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= ' ' {
			i++
		}
		return i
	}
	r := rand.New(rand.NewPCG(1, 2))
	plain := []byte{' ', '!', '#', '[', ']', 'a', '~', 0x7f, 0x80, 0xa0, 0xe9, 0xff, '!' + 1, '"' + 1, '\\' + 1, '\\' - 1}
	for _, stop := range []byte{'"', '\\', 0, 0x1f, '\n'} {
		for n := range 24 {
			for at := 0; at <= n; at++ {
				b := make([]byte, n)
				for k := range b {
					b[k] = plain[r.IntN(len(plain))]
				}
				if at < n {
					b[at] = stop
				}
				for i := 0; i <= n; i++ {
					if got, want := stringStop(b, i), ref(b, i); got != want {
						t.Fatalf("stringStop(%q, %d) = %d, want %d", b, i, got, want)
					}
				}
			}
		}
	}
}

// TestDecodeFlat: a page as bench service and the Go client send it (escapes every line,
// HTML not escaped) is read by decodeFlat, to encoding/json's fields; a body with a
// priority, a null or a name in capitals is left to the other decoders, which read it.
func TestDecodeFlat(t *testing.T) {
	page := "<html><head><title>Caf\u00e9 \"menu\"</title></head>\n<body>\t<p class=\"x\">a\\b &amp; \u2014 \U0001F600</p>\r\n</body></html>\x01"
	var q bytes.Buffer
	enc := json.NewEncoder(&q)
	enc.SetEscapeHTML(false)
	enc.Encode(page)
	body := []byte(`{"id":"doc-1","url":"https://bench.example/p/1","html":` + string(bytes.TrimSpace(q.Bytes())) + `,"content_type":"text/html"}`)
	var flat, strict documentJSON
	if !decodeFlat(body, &flat) {
		t.Fatalf("decodeFlat left %s to the others", body)
	}
	if err := decodeStrict(body, &strict); err != nil || flat != strict || flat.HTML != page {
		t.Fatalf("decodeFlat %+v; encoding/json %+v, %v", flat, strict, err)
	}
	for _, b := range []string{`{"id":"a","text":"x","priority":1}`, `{"id":"a","text":"x","url":null}`, `{"ID":"a","text":"x"}`} {
		var dj documentJSON
		if decodeFlat([]byte(b), &dj) {
			t.Errorf("decodeFlat read %s", b)
		}
		if err := decodeDocumentJSON([]byte(b), &dj); err != nil || dj.Text != "x" {
			t.Errorf("decodeDocumentJSON(%s): %+v, %v", b, dj, err)
		}
	}
}
