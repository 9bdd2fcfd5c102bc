package corpus_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/neardup/neardup/corpus"
)

func Example() {
	dir, _ := os.MkdirTemp("", "corpus")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "docs.jsonl")
	os.WriteFile(in, []byte(`{"id":"a","text":"first","meta":{"url":"https://example.com/a"}}
{"id":"b","html":"<p>second</p>"}
not JSON
{"text":"no id: FILE:LINE is its id"}
`), 0o644)

	opt := corpus.Options{
		URLField: "meta.url",
		OnError: func(b corpus.BadRecord) error {
			fmt.Println("skipped line", b.Source.Line, errors.Is(b, corpus.ErrSyntax))
			return nil // nil skips the record; an error would stop the run
		},
	}
	r, err := corpus.Open([]string{in}, opt)
	if err != nil {
		panic(err)
	}
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			panic(err)
		}
		id := filepath.Base(rec.ID) // "FILE:LINE" ids name the file as given: shortened here
		fmt.Printf("%s %q %q %q\n", id, rec.Text, rec.HTML, rec.URL)
	}
	r.Close()
	st := r.Stats()
	fmt.Println(st.Records, "records,", st.Bad, "bad")

	// The second pass: the kept records, unchanged, in out/docs.jsonl.
	out := filepath.Join(dir, "out")
	st, err = corpus.Copy([]string{in}, corpus.Options{URLField: "meta.url"}, out, corpus.CopyOptions{Keep: func(id string) bool { return id != "b" }})
	fmt.Println(st.Kept, "kept", err)
	// Output:
	// a "first" "" "https://example.com/a"
	// b "" "<p>second</p>" ""
	// skipped line 3 true
	// docs.jsonl:4 "no id: FILE:LINE is its id" "" ""
	// 3 records, 1 bad
	// 2 kept <nil>
}
