package corpus_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/neardup/neardup/corpus"
)

// pqMeta is a nested group of pqDoc.
type pqMeta struct {
	URL  string `parquet:"url"`
	Lang string `parquet:"lang,dict"`
}

// pqDoc is a row of the test files: a text that may be null, a nested URL, and columns
// neardup does not read, which a copy must keep.
type pqDoc struct {
	ID    string   `parquet:"id"`
	Text  *string  `parquet:"text,optional"`
	Meta  pqMeta   `parquet:"meta"`
	Score float64  `parquet:"score"`
	Tags  []string `parquet:"tags,list"`
}

// pqCodecs are the codecs the tests write with, by name.
var pqCodecs = map[string]compress.Codec{
	"none": &parquet.Uncompressed, "snappy": &parquet.Snappy, "gzip": &parquet.Gzip, "zstd": &parquet.Zstd,
}

// pqDocs returns n rows; every seventh has a null text.
func pqDocs(prefix string, n int) []pqDoc {
	docs := make([]pqDoc, n)
	for i := range docs {
		docs[i] = pqDoc{ID: fmt.Sprintf("%s%d", prefix, i), Meta: pqMeta{URL: fmt.Sprintf("https://example.com/%s/%d", prefix, i), Lang: "en"},
			Score: float64(i) / 2, Tags: []string{"t", fmt.Sprint(i % 3)}}
		if i%7 != 3 {
			s := fmt.Sprintf("document %d of %s: %s", i, prefix, strings.Repeat("wörds ", i%11))
			docs[i].Text = &s
		}
	}
	return docs
}

// writeParquet writes rows to path with codec, groupRows rows to a row group, and the
// options.
func writeParquet[T any](t testing.TB, path string, codec compress.Codec, groupRows int, rows []T, options ...parquet.WriterOption) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[T](f, append([]parquet.WriterOption{parquet.Compression(codec), parquet.MaxRowsPerRowGroup(int64(groupRows)),
		parquet.KeyValueMetadata("origin", "neardup test")}, options...)...)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// readParquet reads a whole Parquet file as T rows.
func readParquet[T any](t testing.TB, path string) []T {
	t.Helper()
	rows, err := parquet.ReadFile[T](path)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestParquetRead(t *testing.T) {
	for name, codec := range pqCodecs {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "docs.parquet")
			docs := pqDocs("d", 50)
			writeParquet(t, path, codec, 16, docs)
			recs, bad, stats := readAll(t, []string{path}, corpus.Options{URLField: "meta.url"})
			var want []corpus.Record
			for i, d := range docs {
				if d.Text != nil {
					want = append(want, corpus.Record{ID: d.ID, URL: d.Meta.URL, Text: *d.Text,
						Source: corpus.Source{File: path, Format: corpus.Parquet, Line: i + 1}})
				}
			}
			if !reflect.DeepEqual(recs, want) {
				t.Fatalf("records:\n%+v\nwant\n%+v", recs, want)
			}
			if len(bad) != len(docs)-len(want) || !errors.Is(bad[0], corpus.ErrField) || bad[0].Source.String() != path+":4" {
				t.Fatalf("bad records %v", bad)
			}
			st, _ := os.Stat(path)
			if stats.Bytes != st.Size() || stats.Total != st.Size() {
				t.Fatalf("stats %+v, file %d bytes", stats, st.Size())
			}
		})
	}
}

// TestParquetFields reads ids that are integers or absent, a priority and a timestamp.
func TestParquetFields(t *testing.T) {
	type row struct {
		N    int32   `parquet:"n"`
		Body string  `parquet:"body"`
		P    float32 `parquet:"p"`
		T    int64   `parquet:"t,timestamp(millisecond)"`
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "x.parquet")
	writeParquet(t, path, &parquet.Snappy, 10, []row{{N: -7, Body: "a", P: 1.5, T: 1700000000123}, {N: 8, Body: "b"}})
	recs, bad, _ := readAll(t, []string{path}, corpus.Options{IDField: "n", TextField: "body", PriorityField: "p", TimeField: "t"})
	if len(bad) != 0 || len(recs) != 2 || recs[0].ID != "-7" || recs[1].ID != "8" || recs[0].Priority != 1.5 ||
		recs[0].FetchTime.UnixMilli() != 1700000000123 || recs[0].Text != "a" {
		t.Fatalf("records %+v, bad %v", recs, bad)
	}
	recs, _, _ = readAll(t, []string{path}, corpus.Options{TextField: "body"})
	if recs[1].ID != path+":2" {
		t.Fatalf("id %q, want the row number", recs[1].ID)
	}
}

// TestParquetBadFiles: a truncated shard, a shard whose text column is not a string and
// one whose text column is a group are each one bad record naming the file and row 1;
// the reading goes on with the next input.
func TestParquetBadFiles(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeParquet(t, good, &parquet.Zstd, 10, pqDocs("g", 20))
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	writeFile(t, truncated, data[:len(data)*2/3])
	wrongType := filepath.Join(dir, "wrong.parquet")
	writeParquet(t, wrongType, &parquet.Snappy, 10, []struct {
		Text int64 `parquet:"text"`
	}{{1}, {2}})
	group := filepath.Join(dir, "group.parquet")
	writeParquet(t, group, &parquet.Snappy, 10, []struct {
		Text pqMeta `parquet:"text"`
	}{{}})
	recs, bad, _ := readAll(t, []string{truncated, wrongType, group, good}, corpus.Options{})
	if len(recs) != 17 || recs[0].ID != "g0" {
		t.Fatalf("%d records, want the good file's 17", len(recs))
	}
	for i, want := range []struct {
		file     string
		sentinel error
		says     string
	}{{truncated, corpus.ErrTruncated, "not a readable Parquet file"}, {wrongType, corpus.ErrField, "not a string"},
		{group, corpus.ErrField, "group of columns"}} {
		if i >= len(bad) || bad[i].Source.String() != want.file+":1" || !errors.Is(bad[i], want.sentinel) || !strings.Contains(bad[i].Error(), want.says) {
			t.Fatalf("bad record %d: %v, want %s:1 %v %q", i, bad, want.file, want.sentinel, want.says)
		}
	}
	_, err = corpus.Copy([]string{truncated, good}, corpus.Options{OnError: func(b corpus.BadRecord) error {
		if b.Source.File == truncated {
			return fmt.Errorf("stop at %v", b)
		}
		return nil
	}}, t.TempDir(), corpus.CopyOptions{})
	if err == nil || !strings.Contains(err.Error(), "stop at "+truncated+":1") {
		t.Fatalf("Copy returned %v, want OnError's error", err)
	}
}

// TestParquetCorruptRowGroup overwrites the end of the second row group's text column
// chunk (its page's data, after the header and its statistics): its rows from there are
// one bad record, the third row group is read, and Copy writes the rows read, skipping
// the row group it cannot decode.
func TestParquetCorruptRowGroup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.parquet")
	docs := pqDocs("c", 30)
	for i := range docs {
		s := fmt.Sprintf("row %d %s", i, strings.Repeat("x", 200))
		docs[i].Text = &s
	}
	writeParquet(t, path, &parquet.Snappy, 10, docs)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := pf.Schema().Lookup("text")
	meta := pf.Metadata().RowGroups[1].Columns[leaf.ColumnIndex].MetaData
	if _, err := f.WriteAt([]byte(strings.Repeat("\xff", 64)), meta.DataPageOffset+meta.TotalCompressedSize-100); err != nil {
		t.Fatal(err)
	}
	f.Close()
	recs, bad, _ := readAll(t, []string{path}, corpus.Options{})
	if len(bad) != 1 || !errors.Is(bad[0], corpus.ErrTruncated) || bad[0].Source.Line < 11 || bad[0].Source.Line > 20 ||
		!strings.Contains(bad[0].Error(), "to 20 of row group 2 are not read") {
		t.Fatalf("bad records %v", bad)
	}
	if len(recs) != 30-(21-bad[0].Source.Line) || recs[len(recs)-1].ID != "c29" || recs[9].ID != "c9" {
		t.Fatalf("%d records, the last %q", len(recs), recs[len(recs)-1].ID)
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := corpus.Copy([]string{path}, corpus.Options{}, out, corpus.CopyOptions{}); err != nil {
		t.Fatalf("Copy: %v", err)
	}
	if got := readParquet[pqDoc](t, filepath.Join(out, "c.parquet")); len(got) != len(recs) || got[len(got)-1].ID != "c29" {
		t.Fatalf("copy: %d rows, want %d", len(got), len(recs))
	}
}

// TestParquetShards reads a directory of shards, nested ones too, in lexical order, and
// copies each to the same relative path.
func TestParquetShards(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "b.parquet"), &parquet.Gzip, 5, pqDocs("b", 8))
	writeParquet(t, filepath.Join(dir, "a", "x.parquet"), &parquet.Snappy, 5, pqDocs("a", 8))
	writeFile(t, filepath.Join(dir, "_SUCCESS"), []byte("a marker, not read"))
	recs, bad, stats := readAll(t, []string{dir}, corpus.Options{})
	if len(recs) != 14 || len(bad) != 2 || recs[0].ID != "a0" || recs[13].ID != "b7" || recs[0].Source.Format != corpus.Parquet {
		t.Fatalf("%d records (%v...), %d bad", len(recs), recs[0].ID, len(bad))
	}
	if stats.Bytes != stats.Total {
		t.Errorf("read %d bytes of %d", stats.Bytes, stats.Total)
	}
	out := filepath.Join(t.TempDir(), "out")
	stats, err := corpus.Copy([]string{dir}, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return id != "a1" }})
	if err != nil || stats.Kept != 13 {
		t.Fatalf("Copy: %v, %+v", err, stats)
	}
	if got := readParquet[pqDoc](t, filepath.Join(out, "a", "x.parquet")); len(got) != 6 || got[1].ID != "a2" {
		t.Fatalf("copy of a/x.parquet: %+v", got)
	}
	if got := readParquet[pqDoc](t, filepath.Join(out, "b.parquet")); len(got) != 7 {
		t.Fatalf("copy of b.parquet: %d rows", len(got))
	}
	for _, format := range []corpus.Format{corpus.Parquet, corpus.Dir} {
		recs, _, _ := readAll(t, []string{dir}, corpus.Options{Format: format})
		if want := map[corpus.Format]int{corpus.Parquet: 14, corpus.Dir: 0}[format]; len(recs) != want {
			t.Fatalf("Format %v: %d records, want %d", format, len(recs), want)
		}
	}
}

// TestParquetCopy copies with each codec, dropping some rows: the copy has the input's
// schema, codecs and metadata, and the kept rows' values, every column, in order.
func TestParquetCopy(t *testing.T) {
	for name, codec := range pqCodecs {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			in := filepath.Join(dir, "in", "docs.parquet")
			docs := pqDocs("d", 45)
			writeParquet(t, in, codec, 10, docs)
			drop := map[string]bool{"d0": true, "d5": true, "d10": true, "d11": true, "d12": true, "d13": true, "d14": true, "d15": true, "d16": true, "d17": true, "d18": true, "d19": true, "d44": true}
			out := filepath.Join(dir, "out")
			if _, err := corpus.Copy([]string{in}, corpus.Options{}, out, corpus.CopyOptions{Keep: func(id string) bool { return !drop[id] }}); err != nil {
				t.Fatal(err)
			}
			var want []pqDoc
			for _, d := range docs {
				if d.Text != nil && !drop[d.ID] {
					want = append(want, d)
				}
			}
			got := readParquet[pqDoc](t, filepath.Join(out, "docs.parquet"))
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("copy:\n%+v\nwant\n%+v", got, want)
			}
			inFile, outFile := openParquetFile(t, in), openParquetFile(t, filepath.Join(out, "docs.parquet"))
			if a, b := inFile.Schema().String(), outFile.Schema().String(); a != b {
				t.Fatalf("schema\n%s\nwant\n%s", b, a)
			}
			for _, rg := range outFile.Metadata().RowGroups {
				for _, c := range rg.Columns {
					if c.MetaData.Codec != inFile.Metadata().RowGroups[0].Columns[0].MetaData.Codec {
						t.Fatalf("column %v codec %v", c.MetaData.PathInSchema, c.MetaData.Codec)
					}
				}
			}
			if v, ok := outFile.Lookup("origin"); !ok || v != "neardup test" {
				t.Fatalf("key-value metadata origin = %q, %v", v, ok)
			}
		})
	}
}

func openParquetFile(t testing.TB, path string) *parquet.File {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return pf
}

// TestParquetMemory reads a file of 64 MB of text in 32 row groups: the live heap stays
// a small fraction of it, so memory does not grow with the file.
func TestParquetMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MB of text")
	}
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	const groups, perGroup, size = 32, 1000, 2000
	path := filepath.Join(t.TempDir(), "big.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[row](f, parquet.Compression(&parquet.Snappy), parquet.MaxRowsPerRowGroup(perGroup))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven zebras quietly graze near old mills")
	var b strings.Builder
	for i := range groups * perGroup {
		b.Reset()
		for j := i; b.Len() < size; j = j*31 + 7 {
			b.WriteString(words[uint(j)%uint(len(words))])
			b.WriteByte(' ')
		}
		if _, err := w.Write([]row{{ID: fmt.Sprint(i), Text: b.String()}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err := corpus.Open([]string{path}, corpus.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var peak uint64
	var ms runtime.MemStats
	for n := 0; ; n++ {
		if _, err := r.Next(); err != nil {
			if n != groups*perGroup {
				t.Fatalf("%d records, then %v", n, err)
			}
			break
		}
		if n%2000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	if peak > 16<<20 {
		t.Fatalf("live heap reached %d MB reading 64 MB of text", peak>>20)
	}
	t.Logf("peak live heap %.1f MB", float64(peak)/(1<<20))
}

// TestParquetAnnotateRemoved: an annotated copy has every document's row with the four
// annotation columns after the input's own, null where JSONL has null; with Removed, the
// dropped rows go to their own Parquet file and the two halves are the input.
func TestParquetAnnotateRemoved(t *testing.T) {
	type annotated struct {
		ID         string   `parquet:"id"`
		DupCluster *int64   `parquet:"dup_cluster,optional"`
		DupKept    bool     `parquet:"dup_kept"`
		DupMethod  *string  `parquet:"dup_method,optional"`
		DupScore   *float64 `parquet:"dup_score,optional"`
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "docs.parquet")
	docs := pqDocs("d", 20)
	writeParquet(t, in, &parquet.Zstd, 8, docs)
	ann := func(id string) corpus.Annotation {
		switch id {
		case "d1":
			return corpus.Annotation{Cluster: 4, HasCluster: true, Kept: true}
		case "d2":
			return corpus.Annotation{Cluster: 4, HasCluster: true, Method: "minhash", Score: 0.75}
		case "d4":
			return corpus.Annotation{Cluster: 4, HasCluster: true, Method: "exact"}
		}
		return corpus.Annotation{Kept: true}
	}
	out := filepath.Join(dir, "annotated")
	stats, err := corpus.Copy([]string{in}, corpus.Options{}, out, corpus.CopyOptions{Annotate: ann})
	if err != nil || stats.Kept != 17 {
		t.Fatalf("Copy: %v, %+v", err, stats)
	}
	path := filepath.Join(out, "docs.parquet")
	got := readParquet[annotated](t, path)
	i64, str, f64 := func(v int64) *int64 { return &v }, func(v string) *string { return &v }, func(v float64) *float64 { return &v }
	want := map[string]annotated{
		"d0": {ID: "d0", DupKept: true},
		"d1": {ID: "d1", DupCluster: i64(4), DupKept: true},
		"d2": {ID: "d2", DupCluster: i64(4), DupMethod: str("minhash"), DupScore: f64(0.75)},
		"d4": {ID: "d4", DupCluster: i64(4), DupMethod: str("exact")},
	}
	if len(got) != 17 {
		t.Fatalf("%d rows, want 17", len(got))
	}
	for _, g := range got[:4] {
		if w, ok := want[g.ID]; ok && !reflect.DeepEqual(g, w) {
			t.Errorf("row %+v, want %+v", g, w)
		}
	}
	if rows := readParquet[pqDoc](t, path); !reflect.DeepEqual(rows[2], docs[2]) {
		t.Errorf("the input's columns changed: %+v, want %+v", rows[2], docs[2])
	}
	cols := openParquetFile(t, path).Schema().Columns()
	if names := fmt.Sprint(cols[len(cols)-5:]); names != "[[tags list element] [dup_cluster] [dup_kept] [dup_method] [dup_score]]" {
		t.Errorf("columns end with %s", names)
	}
	if _, err := corpus.Copy([]string{path}, corpus.Options{}, filepath.Join(dir, "twice"), corpus.CopyOptions{Annotate: ann}); err == nil || !strings.Contains(err.Error(), "column dup_cluster already") {
		t.Errorf("annotating an annotated file: %v", err)
	}

	kept, removed := filepath.Join(dir, "kept"), filepath.Join(dir, "removed")
	if _, err := corpus.Copy([]string{in}, corpus.Options{}, kept, corpus.CopyOptions{Keep: func(id string) bool { return id != "d2" && id != "d9" }, Removed: removed}); err != nil {
		t.Fatal(err)
	}
	gone := readParquet[pqDoc](t, filepath.Join(removed, "docs.parquet"))
	if len(gone) != 2 || gone[0].ID != "d2" || !reflect.DeepEqual(gone[1], docs[9]) {
		t.Errorf("removed rows %+v", gone)
	}
	if n := len(readParquet[pqDoc](t, filepath.Join(kept, "docs.parquet"))); n != 15 {
		t.Errorf("%d kept rows, want 15", n)
	}
}

// TestParquetPageLimit: a page larger than twice MaxRecordBytes plus 8 MiB once
// decompressed makes its row group one bad record (ErrTooLarge), found from its header
// before it is decompressed; the next row group is read. With the default limit, the
// same file reads whole.
func TestParquetPageLimit(t *testing.T) {
	type row struct {
		ID   string `parquet:"id"`
		Text string `parquet:"text"`
	}
	dir := t.TempDir()
	rows := []row{{"big", strings.Repeat("x", 9<<20)}, {"small", "a text"}}
	// With statistics, the page header holds the 9 MiB value twice (smallest and
	// largest) and is too large itself; without, the page is.
	withStats, noStats := filepath.Join(dir, "stats.parquet"), filepath.Join(dir, "nostats.parquet")
	writeParquet(t, withStats, &parquet.Snappy, 1, rows)
	writeParquet(t, noStats, &parquet.Snappy, 1, rows, parquet.DataPageStatistics(false))
	for path, says := range map[string]string{withStats: "a page header of more than", noStats: "a page of 94"} {
		recs, bad, _ := readAll(t, []string{path}, corpus.Options{MaxRecordBytes: 1000})
		if len(bad) != 1 || !errors.Is(bad[0], corpus.ErrTooLarge) || !strings.Contains(bad[0].Error(), path+":1: ") ||
			!strings.Contains(bad[0].Error(), says) || len(recs) != 1 || recs[0].ID != "small" {
			t.Fatalf("%s: records %d, bad %v", path, len(recs), bad)
		}
		if recs, bad, _ := readAll(t, []string{path}, corpus.Options{}); len(recs) != 2 || len(bad) != 0 {
			t.Fatalf("%s, default limit: %d records, bad %v", path, len(recs), bad)
		}
	}
}
