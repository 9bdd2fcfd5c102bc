package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"

	"github.com/valyala/fastjson"
)

// The fields annotate mode adds to a JSONL record, and the keys of a line of a sidecar
// annotations file beside "id" and "source".
const (
	FieldCluster = "dup_cluster" // the cluster id, or null for a document with no duplicate
	FieldKept    = "dup_kept"    // true for a representative or a unique document
	FieldMethod  = "dup_method"  // "exact", "simhash", "minhash"; null when kept
	FieldScore   = "dup_score"   // "distance" or "similarity"; null when kept or exact
)

// SidecarSuffix ends the name of the annotations file Copy writes for a WARC or a Dir
// input in annotate mode: outDir/BASE.annotations.jsonl, BASE the input's base name.
const SidecarSuffix = ".annotations.jsonl"

// annotationFields are the top-level names annotate mode writes, and so replaces.
var annotationFields = []string{FieldCluster, FieldKept, FieldMethod, FieldScore}

// appendAnnotation appends the annotation's four fields to b, each preceded by a comma:
// all four always, null where a value is not relevant (see the Field constants), so that
// every annotated record has the same schema.
func appendAnnotation(b []byte, a Annotation) ([]byte, error) {
	if err := a.check(); err != nil {
		return b, err
	}
	b = append(b, `,"`+FieldCluster+`":`...)
	if a.HasCluster {
		b = strconv.AppendInt(b, a.Cluster, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"`+FieldKept+`":`...)
	b = strconv.AppendBool(b, a.Kept)
	b = append(b, `,"`+FieldMethod+`":`...)
	if a.Method == "" {
		b = append(b, "null"...)
	} else {
		b = append(append(append(b, '"'), a.Method...), '"')
	}
	b = append(b, `,"`+FieldScore+`":`...)
	if a.Method == "" || a.Method == "exact" {
		return append(b, "null"...), nil
	}
	return strconv.AppendFloat(b, a.Score, 'f', -1, 64), nil
}

// check returns an error for an annotation that cannot be written: a Method of another
// name, a Score that JSON cannot hold.
func (a Annotation) check() error {
	switch a.Method {
	case "", "exact", "simhash", "minhash":
	default:
		return fmt.Errorf("corpus: Annotation.Method %q is not one of \"\", \"exact\", \"simhash\", \"minhash\"", a.Method)
	}
	if math.IsNaN(a.Score) || math.IsInf(a.Score, 0) {
		return fmt.Errorf("corpus: Annotation.Score %v is not a JSON number", a.Score)
	}
	return nil
}

// annotateLine appends to dst the JSONL line (a JSON object, then optionally its line
// end) with the annotation's fields added at the end of the object, and returns it. The
// rest of the line is copied as it is, not re-encoded: the fields go before the closing
// brace, after a check that the line ends with one.
func annotateLine(dst, line []byte, a Annotation) ([]byte, error) {
	end := len(line)
	for end > 0 && isJSONSpace(line[end-1]) {
		end--
	}
	if end == 0 || line[end-1] != '}' {
		return dst, fmt.Errorf("corpus: a JSONL record to annotate does not end with '}'")
	}
	// The object is empty when the last non-space byte before '}' is its '{': no JSON
	// value ends with '{', so this cannot be a member's last byte.
	last := end - 2
	for last >= 0 && isJSONSpace(line[last]) {
		last--
	}
	dst = append(dst, line[:end-1]...)
	start := len(dst)
	dst, err := appendAnnotation(dst, a)
	if err != nil {
		return dst, err
	}
	if last >= 0 && line[last] == '{' {
		dst = append(dst[:start], dst[start+1:]...) // no comma after '{'
	}
	dst = append(dst, '}')
	return append(dst, line[end:]...), nil
}

// isJSONSpace reports whether c is whitespace to JSON (RFC 8259).
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// stripAnnotation returns the line of the record v was parsed from without its top-level
// annotation fields, re-encoded (only such a line is), with the line end of raw, or nil
// when v has none of them. A corpus annotated before is so annotated afresh: the new
// fields replace the old, rather than a second copy of a key following the first.
func stripAnnotation(v *fastjson.Value, raw []byte) []byte {
	o := v.GetObject()
	found := false
	for _, k := range annotationFields {
		for o.Get(k) != nil { // Del deletes one member: a key may be repeated
			o.Del(k)
			found = true
		}
	}
	if !found {
		return nil
	}
	var b []byte
	if bytes.HasPrefix(raw, utf8BOM) {
		b = append(b, utf8BOM...)
	}
	b = v.MarshalTo(b)
	return append(b, raw[len(bytes.TrimRight(raw, "\r\n")):]...)
}

// sidecar writes the annotations file of a WARC or a Dir input.
type sidecar struct {
	f *os.File
	w *bufio.Writer
}

// sidecarLine is a line of an annotations file. Source is where the record is in the
// input: "FILE@OFFSET" for WARC, the file's path for a Dir.
type sidecarLine struct {
	ID      string   `json:"id"`
	Source  string   `json:"source"`
	Cluster *int64   `json:"dup_cluster"`
	Kept    bool     `json:"dup_kept"`
	Method  *string  `json:"dup_method"`
	Score   *float64 `json:"dup_score"`
}

// newSidecar creates outDir/BASE.annotations.jsonl for the input at path.
func newSidecar(path, outDir string) (*sidecar, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("corpus: %w", err)
	}
	f, err := create(filepath.Join(outDir, filepath.Base(abs)+SidecarSuffix))
	if err != nil {
		return nil, err
	}
	return &sidecar{f: f, w: bufio.NewWriter(f)}, nil
}

// write writes the annotation of rec.
func (s *sidecar) write(rec *Record, a Annotation) error {
	if err := a.check(); err != nil {
		return err
	}
	l := sidecarLine{ID: rec.ID, Source: rec.Source.String(), Kept: a.Kept}
	if a.HasCluster {
		l.Cluster = &a.Cluster
	}
	if a.Method != "" {
		l.Method = &a.Method
		if a.Method != "exact" {
			l.Score = &a.Score
		}
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	_, err = s.w.Write(append(b, '\n'))
	return err
}

// close flushes and closes the file.
func (s *sidecar) close() error {
	err := s.w.Flush()
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	return err
}
