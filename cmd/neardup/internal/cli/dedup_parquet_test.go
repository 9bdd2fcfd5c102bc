package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// parquetNode is the directory of the Node scripts that write and read Parquet with
// hyparquet, an implementation independent of the Go library neardup uses.
var parquetNode = filepath.Join("..", "..", "..", "..", "testdata", "parquet-node")

// nodeParquet returns the path of node, skipping when node or the scripts' modules are
// missing (failing with CI=true, where .ci/run installs them).
func nodeParquet(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(parquetNode, "node_modules", "hyparquet-writer"))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or the hyparquet modules are missing (%v); .ci/run installs them", err)
		}
		t.Skipf("node or the hyparquet modules are missing (%v); install nodejs and npm, then run npm ci in %s", err, parquetNode)
	}
	return node
}

// nodeFile is what read.mjs prints of one Parquet file.
type nodeFile struct {
	Schema []map[string]any `json:"schema"`
	Codecs []string         `json:"codecs"`
	KV     []map[string]any `json:"kv"`
	Rows   []map[string]any `json:"rows"`
}

// nodeRead reads Parquet files with hyparquet.
func nodeRead(t *testing.T, node string, paths ...string) map[string]nodeFile {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join(parquetNode, "read.mjs")}, paths...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node read.mjs: %v", err)
	}
	files := map[string]nodeFile{}
	if err := json.Unmarshal(out, &files); err != nil {
		t.Fatal(err)
	}
	return files
}

// TestDedupParquetNode deduplicates Parquet shards written by hyparquet-writer (Node):
// snappy, gzip and uncompressed, with a nested group, nulls and duplicates across
// shards, a shard with an integer text column and a truncated shard. The two bad shards
// are reported and skipped; hyparquet reads each copy back with its input's schema,
// codecs and metadata and exactly the kept rows' values, in order. Debian's Node has no
// zstd compressor, so the zstd shard is written by parquet-go; hyparquet still reads it
// and its copies.
func TestDedupParquetNode(t *testing.T) {
	node := nodeParquet(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	nodeShards(t, node, in)
	removed := filepath.Join(dir, "removed")
	_, stderr, code := run(t, "", "dedup", "--out", out, "--removed", removed, "--url-field", "meta.url", in)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bad := readOut(t, out, "bad.jsonl")
	for _, want := range []string{"shard-9-truncated.parquet:1", "shard-8-wrong-type.parquet:1", "shard-0-snappy.parquet:12"} {
		if !strings.Contains(bad, want) {
			t.Errorf("bad.jsonl does not name %s:\n%s", want, bad)
		}
	}
	keep := map[string]bool{}
	for _, id := range strings.Fields(readOut(t, out, "keep.txt")) {
		keep[id] = true
	}
	if drop := strings.Fields(readOut(t, out, "drop.txt")); len(drop) < 20 || len(keep) < 60 {
		t.Fatalf("%d kept, %d dropped: the shards' duplicates were not all found", len(keep), len(drop))
	}
	shards := []string{"shard-0-snappy.parquet", "shard-1-gzip.parquet", "shard-2-uncompressed.parquet", "shard-3-zstd.parquet", "shard-8-wrong-type.parquet"}
	var paths []string
	for _, s := range shards {
		paths = append(paths, filepath.Join(in, s), filepath.Join(out, "corpus", s))
	}
	annotated := filepath.Join(dir, "annotated")
	if _, stderr, code := run(t, "", "dedup", "--out", annotated, "--annotate", "--url-field", "meta.url", in); code != ExitOK {
		t.Fatalf("--annotate: exit %d: %s", code, stderr)
	}
	for _, s := range shards {
		paths = append(paths, filepath.Join(removed, s), filepath.Join(annotated, "corpus", s))
	}
	files := nodeRead(t, node, paths...)
	for _, s := range shards {
		src, cp := files[filepath.Join(in, s)], files[filepath.Join(out, "corpus", s)]
		var want, gone []map[string]any
		for _, row := range src.Rows {
			if keep[row["id"].(string)] {
				want = append(want, row)
			} else if row["text"] != nil && s != "shard-8-wrong-type.parquet" {
				gone = append(gone, row)
			}
		}
		checkAnnotated(t, s, src, files[filepath.Join(annotated, "corpus", s)], keep)
		if rm := files[filepath.Join(removed, s)]; len(rm.Rows)+len(gone) > 0 && !reflect.DeepEqual(rm.Rows, gone) {
			t.Errorf("%s: the removed copy's rows %v, want %v", s, rm.Rows, gone)
		}
		if len(want) == 0 {
			src.Codecs = nil // no row group, no column chunk with a codec
		}
		if !reflect.DeepEqual(cp.Schema, src.Schema) || len(cp.Codecs)+len(src.Codecs) > 0 && !reflect.DeepEqual(cp.Codecs, src.Codecs) || !reflect.DeepEqual(cp.KV, src.KV) {
			t.Errorf("%s: copy's schema %v, codecs %v, metadata %v; want %v, %v, %v", s, cp.Schema, cp.Codecs, cp.KV, src.Schema, src.Codecs, src.KV)
		}
		if len(cp.Rows)+len(want) > 0 && !reflect.DeepEqual(cp.Rows, want) {
			t.Errorf("%s: copy's %d rows differ from the %d kept input rows:\n%v\nwant\n%v", s, len(cp.Rows), len(want), cp.Rows, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "corpus", "shard-9-truncated.parquet")); !os.IsNotExist(err) {
		t.Errorf("the truncated shard has a copy (%v)", err)
	}
	for _, s := range []string{"shard-8-wrong-type.parquet", "shard-9-truncated.parquet"} {
		_, stderr, code = run(t, "", "dedup", "--out", filepath.Join(dir, "fail-"+s), "--on-error", "fail", filepath.Join(in, s))
		if code == ExitOK || !strings.Contains(stderr, s+":1") {
			t.Errorf("%s with --on-error fail: exit %d: %s", s, code, stderr)
		}
	}
}

// checkAnnotated checks the annotated copy of a shard as hyparquet reads it: the input's
// schema with the four annotation columns after it, every document's row with its values
// unchanged, dup_kept true for the kept ones.
func checkAnnotated(t *testing.T, name string, src, ann nodeFile, keep map[string]bool) {
	t.Helper()
	n := len(ann.Schema)
	if n != len(src.Schema)+4 || !reflect.DeepEqual(ann.Schema[1:n-4], src.Schema[1:]) {
		t.Errorf("%s: annotated schema %v", name, ann.Schema)
		return
	}
	var docs []map[string]any
	for _, row := range src.Rows {
		if row["text"] != nil && name != "shard-8-wrong-type.parquet" {
			docs = append(docs, row)
		}
	}
	if len(ann.Rows) != len(docs) {
		t.Errorf("%s: %d annotated rows, want %d", name, len(ann.Rows), len(docs))
		return
	}
	for i, row := range ann.Rows {
		if row["dup_kept"] != keep[docs[i]["id"].(string)] {
			t.Errorf("%s: row %v: dup_kept is not %v", name, row, keep[docs[i]["id"].(string)])
		}
		for _, f := range []string{"dup_cluster", "dup_kept", "dup_method", "dup_score"} {
			delete(row, f)
		}
		if !reflect.DeepEqual(row, docs[i]) {
			t.Errorf("%s: annotated row %v, want %v", name, row, docs[i])
		}
	}
}

// nodeShards writes the test's shards into a new directory in: write.mjs's and a zstd
// one.
func nodeShards(t *testing.T, node, in string) {
	t.Helper()
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	write := exec.Command(node, filepath.Join(parquetNode, "write.mjs"), in)
	write.Stderr = os.Stderr
	if err := write.Run(); err != nil {
		t.Fatalf("node write.mjs: %v", err)
	}
	if err := os.Remove(filepath.Join(in, "whole.tmp")); err != nil {
		t.Fatal(err)
	}
	writeZstdShard(t, filepath.Join(in, "shard-3-zstd.parquet"))
}

// writeZstdShard writes a shard with zstd pages, which hyparquet-writer cannot make
// here, with parquet-go: ten documents, two of them copies of others.
func writeZstdShard(t *testing.T, path string) {
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text,optional"`
		Tag  *int32 `parquet:"tag,optional"`
	}
	var rows []row
	for i := range 10 {
		tag := int32(i)
		rows = append(rows, row{ID: fmt.Sprint("z", i), Text: fmt.Sprintf("zstd shard document %d %s", i%8, strings.Repeat("lorem ipsum dolor ", 3+i%8)), Tag: &tag})
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[row](f, parquet.Compression(&parquet.Zstd))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(w.Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
}
