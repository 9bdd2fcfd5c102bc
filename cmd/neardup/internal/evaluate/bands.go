package evaluate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
)

// BandRow is one band of labelled similarity.
type BandRow struct {
	Band       string  `json:"band"`
	Duplicates bool    `json:"duplicates"` // the band is at or above the label threshold
	Labelled   int     `json:"labelled"`   // labelled pairs in the band
	Found      int     `json:"found"`      // pairs of the run in the band
	Recall     float64 `json:"recall"`     // found / labelled, for a band of duplicates
	// FalsePositives is found for a band below the threshold, and ShareOfFound its
	// share of every pair the run found: what the band takes from precision.
	FalsePositives int     `json:"false_positives"`
	ShareOfFound   float64 `json:"share_of_found"`
	// Precision is the whole run's, in the last row ("all") only, whose Recall is the
	// run's too.
	Precision float64 `json:"precision,omitempty"`
}

// BandEdges are the lower edges of the bands of labelled similarity, after the band of
// pairs below the lowest edge or not labelled. The label threshold is added as an edge,
// so that no band straddles it.
var BandEdges = []float64{0.5, 0.7, 0.8, 0.9}

// Bands scores found by band of labelled similarity: per band, the labelled pairs, the
// pairs found, and recall (bands of duplicates) or the false positives (bands below
// labelThreshold), then a row "all" for the whole run.
func Bands(truth Labels, found map[Pair]float64, labelThreshold float64) []BandRow {
	edges := append([]float64{math.Inf(-1), labelThreshold}, BandEdges...)
	slices.Sort(edges)
	edges = slices.Compact(edges)
	band := func(s float64) int {
		i := len(edges) - 1
		for s < edges[i] {
			i--
		}
		return i
	}
	rows := bandRows(edges, labelThreshold)
	for _, s := range truth.Pairs {
		rows[band(s)].Labelled++
	}
	tp, fp := 0, 0
	for p := range found {
		s, ok := truth.Pairs[p]
		if !ok {
			s = math.Inf(-1)
		}
		r := &rows[band(s)]
		r.Found++
		if r.Duplicates {
			tp++
		} else {
			r.FalsePositives++
			fp++
		}
	}
	for i := range rows {
		r := &rows[i]
		if r.Duplicates && r.Labelled > 0 {
			r.Recall = float64(r.Found) / float64(r.Labelled)
		}
		if len(found) > 0 {
			r.ShareOfFound = float64(r.FalsePositives) / float64(len(found))
		}
	}
	all := BandRow{Band: "all", Labelled: truth.Duplicates, Found: len(found), FalsePositives: fp, Duplicates: true}
	if len(found) > 0 {
		all.Precision = float64(tp) / float64(len(found))
		all.ShareOfFound = float64(fp) / float64(len(found))
	}
	if truth.Duplicates > 0 {
		all.Recall = float64(tp) / float64(truth.Duplicates)
	}
	return append(rows, all)
}

// bandRows returns the empty rows of the bands from edges, named.
func bandRows(edges []float64, labelThreshold float64) []BandRow {
	rows := make([]BandRow, len(edges))
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for i, lo := range edges {
		r := &rows[i]
		r.Duplicates = lo >= labelThreshold
		switch {
		case i == 0:
			r.Band = "< " + f(edges[1]) + " or unlabelled"
		case i == len(edges)-1:
			r.Band = ">= " + f(lo)
		default:
			r.Band = f(lo) + "-" + f(edges[i+1])
		}
	}
	return rows
}

// WriteBands writes the rows of Bands as a table headed by the run's precision and
// recall, or as one JSON object a line when asJSON.
func WriteBands(w io.Writer, rows []BandRow, labelThreshold float64, asJSON bool) error {
	bw := bufio.NewWriter(w)
	all := rows[len(rows)-1]
	if asJSON {
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false) // the bands' "<" and ">="
		for _, r := range rows {
			enc.Encode(r)
		}
	} else {
		fmt.Fprintf(bw, "%d labelled duplicate pairs (similarity >= %g); %d pairs found by the run; precision %.4f, recall %.4f\n",
			all.Labelled, labelThreshold, all.Found, all.Precision, all.Recall)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "labelled similarity\tlabelled\tfound\trecall\tfalse positives\tshare of found\t")
		for _, r := range rows[:len(rows)-1] {
			if r.Duplicates {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%.4f\t\t\t\n", r.Band, r.Labelled, r.Found, r.Recall)
			} else {
				fmt.Fprintf(tw, "%s\t%d\t%d\t\t%d\t%.4f\t\n", r.Band, r.Labelled, r.Found, r.FalsePositives, r.ShareOfFound)
			}
		}
		tw.Flush()
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
