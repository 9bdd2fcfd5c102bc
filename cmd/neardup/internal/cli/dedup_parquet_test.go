package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
// codecs and metadata and exactly the kept rows' values, in order. zstd is not among
// the codecs: Debian's Node has no zstd compressor (the Go tests cover it).
func TestDedupParquetNode(t *testing.T) {
	node := nodeParquet(t)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
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
	_, stderr, code := run(t, "", "dedup", "--out", out, "--url-field", "meta.url", in)
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
	shards := []string{"shard-0-snappy.parquet", "shard-1-gzip.parquet", "shard-2-uncompressed.parquet", "shard-8-wrong-type.parquet"}
	var paths []string
	for _, s := range shards {
		paths = append(paths, filepath.Join(in, s), filepath.Join(out, "corpus", s))
	}
	files := nodeRead(t, node, paths...)
	for _, s := range shards {
		src, cp := files[filepath.Join(in, s)], files[filepath.Join(out, "corpus", s)]
		var want []map[string]any
		for _, row := range src.Rows {
			if keep[row["id"].(string)] {
				want = append(want, row)
			}
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
