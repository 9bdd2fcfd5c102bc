package evaluate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"
)

// Row is one threshold of a sweep.
type Row struct {
	Threshold string  `json:"threshold"`
	Predicted int     `json:"predicted"`
	TP        int     `json:"tp"`
	FP        int     `json:"fp"`
	FN        int     `json:"fn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Sweep scores found against truth at every threshold the run's pairs allow, from the
// run's own (every pair, the first row) to the strictest: MinHash similarity in steps of
// 0.05 when bySimilarity, else SimHash distance in steps of one bit. A labelled pair is
// a duplicate when its score is at least labelThreshold. It costs a pass over found per
// row.
func Sweep(truth Labels, found map[Pair]float64, bySimilarity bool, labelThreshold float64) []Row {
	var rows []Row
	for _, t := range cuts(found, bySimilarity) {
		r := Row{}
		if bySimilarity {
			r.Threshold = "similarity >= " + strconv.FormatFloat(t, 'f', 4, 64)
		} else {
			r.Threshold = "distance <= " + strconv.FormatFloat(t, 'f', 0, 64)
		}
		if len(rows) == 0 {
			r.Threshold = "all pairs (" + r.Threshold + ")"
		}
		for p, s := range found {
			if (bySimilarity && s >= t-1e-9) || (!bySimilarity && s <= t) {
				r.Predicted++
				if l, ok := truth.Pairs[p]; ok && l >= labelThreshold {
					r.TP++
				}
			}
		}
		r.FP, r.FN = r.Predicted-r.TP, truth.Duplicates-r.TP
		if r.Predicted > 0 {
			r.Precision = float64(r.TP) / float64(r.Predicted)
		}
		if truth.Duplicates > 0 {
			r.Recall = float64(r.TP) / float64(truth.Duplicates)
		}
		if r.Precision+r.Recall > 0 {
			r.F1 = 2 * r.Precision * r.Recall / (r.Precision + r.Recall)
		}
		rows = append(rows, r)
	}
	return rows
}

// cuts returns the thresholds of a sweep, loosest first.
func cuts(found map[Pair]float64, bySimilarity bool) []float64 {
	var levels []float64
	for _, s := range found {
		levels = append(levels, s)
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	var cuts []float64
	if bySimilarity {
		if len(levels) > 0 {
			for t := 1.0; t >= levels[0]-1e-9; t -= 0.05 {
				cuts = append(cuts, t)
			}
			cuts = append(cuts, levels[0])
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
	} else {
		for k := 0.0; len(levels) > 0 && k <= levels[len(levels)-1]; k++ {
			cuts = append(cuts, k)
		}
		slices.Reverse(cuts)
	}
	if len(cuts) == 0 {
		cuts = []float64{0}
	}
	return cuts
}

// WriteSweep writes the rows as a table headed by the counts, or as one JSON object a
// line when asJSON.
func WriteSweep(w io.Writer, rows []Row, truth Labels, found int, asJSON bool) error {
	bw := bufio.NewWriter(w)
	if asJSON {
		for _, r := range rows {
			b, _ := json.Marshal(r)
			bw.Write(append(b, '\n'))
		}
	} else {
		fmt.Fprintf(bw, "%d labelled duplicate pairs; %d pairs found by the run\n", truth.Duplicates, found)
		tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "threshold\tpredicted\tTP\tFP\tFN\tprecision\trecall\tF1\t")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.4f\t%.4f\t%.4f\t\n", r.Threshold, r.Predicted, r.TP, r.FP, r.FN, r.Precision, r.Recall, r.F1)
		}
		tw.Flush()
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}
