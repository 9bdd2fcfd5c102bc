package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/dedup"
	"github.com/neardup/neardup/internal/procstat"
)

// DedupResult is what a dedup benchmark measured, as `neardup bench dedup --json`
// writes it.
type DedupResult struct {
	Docs             int            `json:"docs"`
	Bytes            int64          `json:"bytes"`
	Method           string         `json:"method"`
	Threads          int            `json:"threads"`
	Seconds          float64        `json:"seconds"`
	DocsPerSecond    float64        `json:"docs_per_second"`
	MBPerSecond      float64        `json:"mb_per_second"`
	Clusters         int            `json:"clusters"`
	Dropped          int            `json:"dropped"`
	PlantedPairs     int            `json:"planted_pairs"`
	PlantedRecovered int            `json:"planted_recovered"`
	Recall           float64        `json:"recall"`
	PeakRSSBytes     uint64         `json:"peak_rss_bytes"`
	Seed             uint64         `json:"seed"`
	Timings          []dedup.Timing `json:"timings"`
}

// Dedup runs the batch dedup engine with o on documents 0 to n-1 of s as they are made
// (id "i"), and returns the time it took (generation included), what it found, and how
// many of the planted pairs ended in one cluster. The corpus is not kept in memory;
// peak memory is the process's.
func Dedup(s *Corpus, n int, o dedup.Options) (DedupResult, error) {
	var size int64
	var text []byte
	i := 0
	runtime.GC()
	start := time.Now()
	res, err := dedup.Run(func() (neardup.Document, error) {
		if i == n {
			return neardup.Document{}, io.EOF
		}
		text = s.Text(text[:0], i)
		size += int64(len(text))
		i++
		return neardup.Document{ID: strconv.Itoa(i - 1), Text: string(text)}, nil
	}, o, nil)
	if err != nil {
		return DedupResult{}, err
	}
	elapsed := time.Since(start).Seconds()
	sum := res.Summary()
	out := DedupResult{
		Docs: n, Bytes: size, Method: dedup.MethodName(o.Pipeline.Near), Threads: res.Options.Threads,
		Seconds: elapsed, DocsPerSecond: float64(n) / elapsed, MBPerSecond: float64(size) / 1e6 / elapsed,
		Clusters: sum.Clusters, Dropped: sum.Dropped, PeakRSSBytes: procstat.PeakRSS(), Seed: s.seed,
		Timings: res.Timings,
	}
	for j := range n {
		if o := s.Original(j); o >= 0 {
			out.PlantedPairs++
			if a, b := res.Docs[o].Cluster, res.Docs[j].Cluster; a >= 0 && a == b {
				out.PlantedRecovered++
			}
		}
	}
	if out.PlantedPairs > 0 {
		out.Recall = float64(out.PlantedRecovered) / float64(out.PlantedPairs)
	}
	return out, nil
}

// WriteCorpusJSONL writes documents 0 to n-1 of s to w as JSONL, {"id":"i","text":...}
// a line, as `neardup dedup` reads them.
func WriteCorpusJSONL(w io.Writer, s *Corpus, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var text []byte
	for i := range n {
		text = s.Text(text[:0], i)
		line, _ := json.Marshal(struct {
			ID   string `json:"id"`
			Text string `json:"text"`
		}{strconv.Itoa(i), string(text)})
		bw.Write(append(line, '\n'))
	}
	return bw.Flush()
}
