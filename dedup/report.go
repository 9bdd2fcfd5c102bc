package dedup

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/neardup/neardup/corpus"
	"github.com/neardup/neardup/dedup/internal/report"
	"github.com/neardup/neardup/extract"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/mirror"
)

// Report sizes: how many clusters each list shows, how many members of each, and how
// much of each text.
const (
	reportClusters = 10
	reportMembers  = 3
	reportText     = 4000
)

// pickClusters picks the clusters the report shows, each as its index, its
// representative and the members to show: the largest, and the borderline ones (a
// member's score against the representative nearest the threshold).
//
// "Largest" means the largest clusters worth reading: those with a near-duplicate
// member come first, because exact copies need no judgement (their text is the same
// after normalization) while near ones are where a threshold is right or wrong; among
// them, larger clusters first (a wrong merge there drops the most documents), then the
// one whose least similar member is least similar (the likeliest wrong merge), then by
// id. Clusters of exact copies only follow when fewer than reportClusters have near
// members. The members shown are the least similar first, exact copies last.
func pickClusters(res *Result) (largest, borderline [][]int) {
	return largestClusters(res), borderlineClusters(res)
}

// largestClusters picks the "largest" clusters of pickClusters.
func largestClusters(res *Result) (largest [][]int) {
	bySim := res.Options.Near != SimHash
	// closeness orders scores: lower is less alike; exact copies are the most alike.
	closeness := func(s Score) float64 {
		switch {
		case s.Exact:
			return math.Inf(1)
		case bySim:
			return s.Similarity
		}
		return -float64(s.Distance)
	}
	type ranked struct {
		cluster int
		members []int // but the representative, least alike first
		least   float64
	}
	ranks := make([]ranked, len(res.Clusters))
	for ci, c := range res.Clusters {
		r := ranked{cluster: ci, least: math.Inf(1)}
		scores := map[int]float64{}
		for _, m := range c.Members {
			if m != c.Representative {
				scores[m] = closeness(res.Score(c.Representative, m))
				r.members = append(r.members, m)
				r.least = min(r.least, scores[m])
			}
		}
		slices.SortStableFunc(r.members, func(a, b int) int { return cmp.Compare(scores[a], scores[b]) })
		ranks[ci] = r
	}
	exactOnly := func(r ranked) int {
		if math.IsInf(r.least, 1) {
			return 1
		}
		return 0
	}
	slices.SortStableFunc(ranks, func(a, b ranked) int {
		ca, cb := res.Clusters[a.cluster], res.Clusters[b.cluster]
		return cmp.Or(
			cmp.Compare(exactOnly(a), exactOnly(b)),
			-cmp.Compare(len(ca.Members), len(cb.Members)),
			cmp.Compare(a.least, b.least),
			cmp.Compare(ca.ID, cb.ID))
	})
	for _, r := range ranks[:min(reportClusters, len(ranks))] {
		c := res.Clusters[r.cluster]
		show := append([]int{r.cluster, c.Representative}, r.members[:min(reportMembers, len(r.members))]...)
		largest = append(largest, show)
	}
	return largest
}

// borderlineClusters picks the borderline clusters of pickClusters: those whose member
// with the score nearest the threshold is nearest it, that member shown.
func borderlineClusters(res *Result) (borderline [][]int) {
	bySim := res.Options.Near != SimHash
	type edge struct {
		cluster, member int
		gap             float64
	}
	var edges []edge
	for ci, c := range res.Clusters {
		best := edge{cluster: -1, gap: math.Inf(1)}
		for _, m := range c.Members {
			s := res.Score(c.Representative, m)
			if m == c.Representative || s.Exact {
				continue
			}
			gap := s.Similarity - res.Options.Threshold
			if !bySim {
				gap = float64(res.Options.Distance - s.Distance)
			}
			if gap = math.Abs(gap); gap < best.gap {
				best = edge{ci, m, gap}
			}
		}
		if best.cluster >= 0 {
			edges = append(edges, best)
		}
	}
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Compare(a.gap, b.gap) })
	for _, e := range edges[:min(reportClusters, len(edges))] {
		borderline = append(borderline, []int{e.cluster, res.Clusters[e.cluster].Representative, e.member})
	}
	return borderline
}

// reportTexts reads the inputs again for the texts of the documents the report shows:
// the main text of HTML (or its visible text with --no-extract), the text of the others,
// cut to reportText characters, and the size of the inputs. names maps the ids read to
// the ids of res.
func reportTexts(paths []string, copt corpus.Options, res *Result, want map[string]bool, names func(string) string) (map[string]string, int64, error) {
	r, err := corpus.Open(paths, copt)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	total := r.Stats().Total
	texts := map[string]string{}
	for len(texts) < len(want) {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, total, err
		}
		rec.ID = names(rec.ID)
		if !want[rec.ID] {
			continue
		}
		text := rec.Text
		if text == "" && rec.HTML != nil {
			eo := res.Options.Extract
			eo.ContentType, eo.URL = rec.ContentType, rec.URL
			if res.Options.NoExtract {
				text, err = extract.VisibleText(rec.HTML, eo)
			} else {
				var x extract.Result
				x, err = extract.Extract(rec.HTML, eo)
				text = x.Text
			}
			if err != nil {
				text = "(" + err.Error() + ")"
			}
		}
		if len(text) > reportText {
			cut := reportText
			for cut > 0 && !utf8.RuneStart(text[cut]) {
				cut--
			}
			text = text[:cut] + " …"
		}
		texts[rec.ID] = text
	}
	return texts, total, nil
}

// reportData assembles the report of a run.
func reportData(title string, res *Result, sum *DirSummary, texts map[string]string, largest, borderline [][]int) (report.Data, error) {
	d := report.Data{Title: title}
	s := sum.Summary
	d.Summary = []report.Field{
		{Name: "documents", Value: strconv.Itoa(s.Documents)},
		{Name: "bad records skipped", Value: strconv.FormatInt(sum.BadRecords+int64(s.Skipped), 10)},
		{Name: "exact duplicates", Value: strconv.Itoa(s.ExactDuplicates)},
		{Name: "near-duplicate pairs", Value: strconv.Itoa(s.NearPairs)},
		{Name: "clusters", Value: strconv.Itoa(s.Clusters)},
		{Name: "kept", Value: strconv.Itoa(s.Kept)},
		{Name: "dropped", Value: strconv.Itoa(s.Dropped)},
		{Name: "dropped bytes", Value: procstat.Bytes(s.DroppedBytes) + " of " + procstat.Bytes(s.Bytes)},
	}
	for _, k := range slices.Sorted(maps.Keys(sum.Parameters)) {
		if k != "threads" { // the report is the same whatever the threads
			d.Params = append(d.Params, report.Field{Name: k, Value: fmt.Sprint(sum.Parameters[k])})
		}
	}
	sizes := map[int]int{}
	for _, c := range res.Clusters {
		sizes[len(c.Members)]++
	}
	for _, size := range slices.Sorted(maps.Keys(sizes)) {
		d.ClusterSizes = append(d.ClusterSizes, report.SizeCount{Size: size, Count: sizes[size]})
	}
	d.Scores = scoreHistogram(res)
	d.Largest, d.Borderline = reportList(res, texts, largest), reportList(res, texts, borderline)
	mirrors, err := findMirrors(res)
	for _, m := range mirrors {
		d.Mirrors = append(d.Mirrors, report.Mirror(m))
	}
	return d, err
}

// scoreHistogram is the histogram of the near pairs' scores: MinHash similarity in bins
// of 1/50 from the one holding the threshold, or SimHash distance in bits.
func scoreHistogram(res *Result) report.Histogram {
	o := res.Options
	h := report.Histogram{Threshold: math.NaN()}
	switch {
	case o.Near == Exact:
		h.Label = "exact duplicates only: no scores"
	case o.Near != SimHash:
		h.Label = "MinHash similarity of the near-duplicate pairs"
		h.Threshold = o.Threshold
		// Bin bounds are k/50 for whole k: lo + i/50 in floating point made labels
		// such as 0.8200000000000001.
		const perUnit = 50
		first := int(math.Floor(o.Threshold*perUnit + 1e-9))
		counts := make([]int, perUnit-first+1)
		for _, p := range res.Pairs {
			if p.Method == MinHash {
				counts[min(len(counts)-1, max(0, int(p.Similarity*perUnit+1e-9)-first))]++
			}
		}
		for i, n := range counts {
			k := float64(first + i)
			h.Bins = append(h.Bins, report.Bin{Lo: k / perUnit, Hi: (k + 1) / perUnit, Count: n})
		}
	default:
		h.Label = "SimHash distance of the near-duplicate pairs (bits)"
		h.Threshold = float64(o.Distance) + 0.5
		counts := make([]int, o.Distance+1)
		for _, p := range res.Pairs {
			if p.Method == SimHash {
				counts[p.Distance]++
			}
		}
		for k, n := range counts {
			h.Bins = append(h.Bins, report.Bin{Lo: float64(k) - 0.5, Hi: float64(k) + 0.5, Count: n})
		}
	}
	return h
}

// reportList turns the clusters pickClusters chose into the report's, with the
// members' texts and scores against their representative.
func reportList(res *Result, texts map[string]string, list [][]int) []report.Cluster {
	bySim := res.Options.Near != SimHash
	member := func(rep, i int) report.Member {
		doc := &res.Docs[i]
		m := report.Member{ID: doc.ID, URL: doc.URL, Text: texts[doc.ID]}
		if i != rep {
			switch sc := res.Score(rep, i); {
			case sc.Exact:
				m.Score = "exact"
			case bySim:
				m.Score = strconv.FormatFloat(sc.Similarity, 'f', 3, 64)
			default:
				m.Score = strconv.Itoa(sc.Distance) + " bits"
			}
		}
		return m
	}
	var out []report.Cluster
	for _, l := range list {
		c := res.Clusters[l[0]]
		rc := report.Cluster{ID: c.ID, Size: len(c.Members), Representative: member(c.Representative, c.Representative)}
		for _, m := range l[2:] {
			rc.Members = append(rc.Members, member(c.Representative, m))
		}
		out = append(out, rc)
	}
	return out
}

// findMirrors finds the sites that carry the same content: by SimHash when the run has
// it, else by the exact hash (same content only).
func findMirrors(res *Result) ([]mirror.Mirror, error) {
	var pages []mirror.Page
	mopt := mirror.Options{}
	for i := range res.Docs {
		doc := &res.Docs[i]
		if doc.URL == "" {
			continue
		}
		fp := doc.SimHash
		if res.Options.Near != SimHash {
			fp = binary.LittleEndian.Uint64(doc.Main[:8])
			mopt.Distance = -1
		}
		pages = append(pages, mirror.Page{URL: doc.URL, SimHash: fp})
	}
	return mirror.Find(pages, mopt)
}
