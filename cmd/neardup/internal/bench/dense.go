package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"strconv"

	"github.com/neardup/neardup/internal/evaldata"
)

// DenseBands counts the labelled pairs of a dense cloud by Jaccard similarity: below
// 0.7, 0.7 to 0.8, 0.8 to 0.9, and 0.9 or above.
type DenseBands [4]int

// WriteDenseDocs writes the documents of a dense cloud (evaldata.DenseCloud) to w as
// JSONL, {"id":..., "text":...} a line, as `neardup dedup` reads them.
func WriteDenseDocs(w io.Writer, docs []evaldata.Doc) error {
	bw := bufio.NewWriter(w)
	for _, d := range docs {
		b, _ := json.Marshal(map[string]string{"id": d.ID, "text": d.Text})
		bw.Write(append(b, '\n'))
	}
	return bw.Flush()
}

// WriteDenseLabels writes the labelled pairs of a dense cloud to w as the TSV that
// `neardup eval --labels` reads (doc_1, doc_2, jaccard_w5), and returns how many fall
// in each band.
func WriteDenseLabels(w io.Writer, pairs []evaldata.Pair) (DenseBands, error) {
	var bands DenseBands
	bw := bufio.NewWriter(w)
	bw.WriteString("doc_1\tdoc_2\tjaccard_w5\n")
	var b []byte
	for _, p := range pairs {
		b = append(b[:0], p.A...)
		b = append(b, '\t')
		b = append(b, p.B...)
		b = append(b, '\t')
		b = strconv.AppendFloat(b, p.Jaccard, 'f', -1, 64)
		bw.Write(append(b, '\n'))
		switch {
		case p.Jaccard >= 0.9:
			bands[3]++
		case p.Jaccard >= 0.8:
			bands[2]++
		case p.Jaccard >= 0.7:
			bands[1]++
		default:
			bands[0]++
		}
	}
	return bands, bw.Flush()
}
