package evaldata_test

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/evaldata"
)

var update = flag.Bool("update", false, "rewrite sampletext.txt.gz from the sample corpus")

// sampleRelease is the folder of the sample corpus the embedded text comes from.
const sampleRelease = "../../sample/clang-15-vs-16/b-16.0.6"

// TestSampleText checks that the embedded text is the main text of the sample's Clang 16
// pages, so that the synthetic corpora stay what the documentation says they are. A change
// to the extractor changes the text and fails this test: rerun it with -update, and know
// that the workloads of neardup bench dedup and bench service change with it.
func TestSampleText(t *testing.T) {
	var want []string
	err := filepath.WalkDir(sampleRelease, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html.gz") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		z, err := gzip.NewReader(f)
		if err != nil {
			return err
		}
		page, err := io.ReadAll(z)
		if err != nil {
			return err
		}
		res, err := extract.Extract(page, extract.Options{Timeout: -1})
		if err != nil {
			return err
		}
		want = append(want, strings.Join(strings.Fields(res.Text), " "))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 90 {
		t.Fatalf("%d pages in %s, want the 92 of the sample", len(want), sampleRelease)
	}
	if *update {
		var buf bytes.Buffer
		z, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		z.Write([]byte(strings.Join(want, "\n") + "\n"))
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("sampletext.txt.gz", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got := evaldata.SampleTexts()
	if !slices.Equal(got, want) {
		t.Errorf("the embedded sample text (%d pages) is not the main text of %s (%d pages); rerun with -update", len(got), sampleRelease, len(want))
	}
}
