package dedup

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/corpus"
)

// WriteClusters writes one JSON object per cluster, in cluster order:
//
//	{"cluster":0,"representative":"a","size":3,"members":[{"id":"a"},{"id":"b","exact":true},{"id":"c","distance":2}]}
//
// A member other than the representative carries its score against the representative:
// "exact" when their normalized main texts are equal, otherwise "distance" (SimHash bits)
// or "similarity" (MinHash estimate), whichever the run's method measures.
func (r *Result) WriteClusters(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, c := range r.Clusters {
		b = append(b[:0], `{"cluster":`...)
		b = strconv.AppendInt(b, int64(c.ID), 10)
		b = append(b, `,"representative":`...)
		b = appendJSONString(b, r.Docs[c.Representative].ID)
		b = append(b, `,"size":`...)
		b = strconv.AppendInt(b, int64(len(c.Members)), 10)
		b = append(b, `,"members":[`...)
		for i, m := range c.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, r.Docs[m].ID)
			if m != c.Representative {
				b = r.appendScore(b, c.Representative, m)
			}
			b = append(b, '}')
		}
		b = append(b, "]}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendScore appends the score fields of member m against representative rep.
func (r *Result) appendScore(b []byte, rep, m int) []byte {
	method, score := r.memberScore(rep, m)
	switch method {
	case Exact:
		return append(b, `,"exact":true`...)
	case MinHash:
		b = append(b, `,"similarity":`...)
		return strconv.AppendFloat(b, score, 'f', 4, 64)
	}
	b = append(b, `,"distance":`...)
	return strconv.AppendInt(b, int64(score), 10)
}

// memberScore is how member m compares with representative rep, as clusters.jsonl and
// the annotations give it: Exact (score 0) when their normalized main texts are equal,
// otherwise the measure of the run's method, MinHash similarity or SimHash distance.
func (r *Result) memberScore(rep, m int) (neardup.Near, float64) {
	s := r.Score(rep, m)
	switch {
	case s.Exact:
		return Exact, 0
	case nearOf(r.Options.Near) == MinHash:
		return MinHash, s.Similarity
	}
	return SimHash, float64(s.Distance)
}

// Annotation returns what the run decided about document i, as corpus.Copy writes it in
// annotate mode: its cluster (the id clusters.jsonl gives), whether it is kept, and, for
// a dropped document, how it compares with its representative, the similarity rounded as
// clusters.jsonl writes it. It computes a Score for a dropped document only.
func (r *Result) Annotation(i int) corpus.Annotation {
	d := &r.Docs[i]
	a := corpus.Annotation{Kept: d.Kept}
	if d.Cluster < 0 {
		return a
	}
	c := &r.Clusters[d.Cluster]
	a.Cluster, a.HasCluster = int64(c.ID), true
	if d.Kept {
		return a
	}
	method, score := r.memberScore(c.Representative, i)
	a.Method = method.String()
	if method == MinHash { // the four decimals of clusters.jsonl, so that the two agree
		score, _ = strconv.ParseFloat(strconv.FormatFloat(score, 'f', 4, 64), 64)
	}
	a.Score = score
	return a
}

// WritePairs writes one JSON object per verified pair, sorted by the documents' input
// order:
//
//	{"a":"x","b":"y","method":"exact"}
//	{"a":"x","b":"z","method":"simhash","distance":2}
//	{"a":"x","b":"w","method":"minhash","similarity":0.8672,"estimate":0.8594}
//
// A MinHash pair's similarity is the exact Jaccard similarity of the two shingle sets
// (or containment, with Options.Containment); its estimate, the MinHash estimate that
// made it a candidate, is written when it differs at four decimals.
//
// Exact duplicates are paired with the first document of their group only, so a group
// of n identical documents gives n-1 pairs.
func (r *Result) WritePairs(w io.Writer) error {
	bw := bufio.NewWriter(w)
	var b []byte
	for _, p := range r.Pairs {
		b = append(b[:0], `{"a":`...)
		b = appendJSONString(b, r.Docs[p.A].ID)
		b = append(b, `,"b":`...)
		b = appendJSONString(b, r.Docs[p.B].ID)
		b = append(b, `,"method":"`...)
		b = append(b, p.Method.String()...)
		b = append(b, '"')
		switch p.Method {
		case SimHash:
			b = append(b, `,"distance":`...)
			b = strconv.AppendInt(b, int64(p.Distance), 10)
		case MinHash:
			b = append(b, `,"similarity":`...)
			b = strconv.AppendFloat(b, p.Similarity, 'f', 4, 64)
			if est := strconv.FormatFloat(p.Estimate, 'f', 4, 64); est != string(b[len(b)-len(est):]) {
				b = append(b, `,"estimate":`...)
				b = append(b, est...)
			}
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteIDs writes the ids of the kept documents (kept true) or of the dropped ones, one
// per line, in input order.
func (r *Result) WriteIDs(w io.Writer, kept bool) error {
	bw := bufio.NewWriter(w)
	for i := range r.Docs {
		if r.Docs[i].Kept == kept {
			bw.WriteString(r.Docs[i].ID)
			if err := bw.WriteByte('\n'); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

// Summary is the counts of a run, for summary.json.
type Summary struct {
	Documents       int   `json:"documents"`
	Skipped         int   `json:"skipped"`
	ExactDuplicates int   `json:"exact_duplicates"` // documents identical to an earlier one
	NearPairs       int   `json:"near_pairs"`       // verified near-duplicate pairs
	Clusters        int   `json:"clusters"`         // of two or more documents
	Kept            int   `json:"kept"`
	Dropped         int   `json:"dropped"`
	Bytes           int64 `json:"bytes"`
	DroppedBytes    int64 `json:"dropped_bytes"`
}

// Summary counts the result.
func (r *Result) Summary() Summary {
	s := Summary{Documents: len(r.Docs), Skipped: r.Skipped, Clusters: len(r.Clusters)}
	for _, p := range r.Pairs {
		if p.Method == Exact {
			s.ExactDuplicates++
		} else {
			s.NearPairs++
		}
	}
	for i := range r.Docs {
		d := &r.Docs[i]
		s.Bytes += int64(d.Bytes)
		if d.Kept {
			s.Kept++
		} else {
			s.Dropped++
			s.DroppedBytes += int64(d.Bytes)
		}
	}
	return s
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}
