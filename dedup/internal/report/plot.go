package report

import (
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The plots' geometry in SVG user units, which are CSS pixels at full width: the whole
// picture, and the plot area inside the axes.
const (
	plotWidth, plotHeight = 640, 280
	plotLeft, plotRight   = 64, 624
	plotTop, plotBottom   = 24, 220
)

// maxCategories is the most cluster sizes plotted one bar each; more are grouped in
// powers of two (2–3, 4–7, 8–15...).
const maxCategories = 24

// plot is a bar chart laid out for the page; every coordinate is formatted.
type plot struct {
	ID             string // prefix of the ids of its <title> and <desc>
	Title, Desc    string
	XLabel, YLabel string
	Bars           []bar
	XTicks, YTicks []tick
	Marker         *marker
}

// bar is one bar, with the tooltip that states its numbers.
type bar struct {
	X, Y, W, H string
	Tip        string
}

// tick is a tick on an axis: its position along the axis and its label.
type tick struct {
	Pos, Label string
}

// marker is the threshold line; Anchor is the SVG text-anchor of its label.
type marker struct {
	X, Label, Anchor string
}

// sizePlot lays out the cluster size distribution, sizes sorted and distinct, or returns
// nil if there is none.
func sizePlot(sizes []SizeCount) *plot {
	if len(sizes) == 0 {
		return nil
	}
	type category struct {
		label, tip string
		count      int
	}
	var cats []category
	if len(sizes) <= maxCategories {
		for _, s := range sizes {
			cats = append(cats, category{strconv.Itoa(s.Size), "size " + strconv.Itoa(s.Size), s.Count})
		}
	} else {
		// Bucket k holds the sizes [2^k, 2^(k+1)-1]; every bucket from the smallest
		// size to the largest is drawn, empty or not.
		first := bits.Len(uint(sizes[0].Size)) - 1
		for _, s := range sizes {
			k := bits.Len(uint(s.Size)) - 1
			for len(cats) <= k-first {
				lo, hi := 1<<(first+len(cats)), 1<<(first+len(cats)+1)-1
				label := strconv.Itoa(lo) + "–" + strconv.Itoa(hi)
				if lo == hi {
					label = strconv.Itoa(lo)
				}
				cats = append(cats, category{label, "sizes " + label, 0})
			}
			cats[k-first].count += s.Count
		}
	}
	counts := make([]int, len(cats))
	for i, c := range cats {
		counts[i] = c.count
	}
	ys, yticks, log := countScale(counts)
	p := &plot{
		ID:     "sizes-plot",
		Title:  "Cluster sizes",
		XLabel: "cluster size (documents)",
		YLabel: "clusters",
		YTicks: yticks,
	}
	if log {
		p.YLabel = "clusters (log scale)"
	}
	p.Desc = "Bar chart of the number of clusters of each size, for sizes " + cats[0].label +
		" to " + cats[len(cats)-1].label + "; the table below has the numbers."
	slot := float64(plotRight-plotLeft) / float64(len(cats))
	longest := 0
	for _, c := range cats {
		longest = max(longest, utf8.RuneCountInString(c.label))
	}
	every := int(math.Ceil(float64(len(cats)) * float64(7*longest+8) / float64(plotRight-plotLeft)))
	for i, c := range cats {
		x := plotLeft + float64(slot*float64(i))
		y := ys(c.count)
		p.Bars = append(p.Bars, bar{
			X: coord(x + float64(0.1*slot)), Y: coord(y), W: coord(0.8 * slot), H: coord(plotBottom - y),
			Tip: c.tip + ": " + formatCount(c.count) + plural(c.count, " cluster", " clusters"),
		})
		if i%every == 0 {
			p.XTicks = append(p.XTicks, tick{coord(x + slot/2), c.label})
		}
	}
	return p
}

// scorePlot lays out the score histogram, bins sorted, with the threshold marked unless
// it is NaN, or returns nil if there is no bin. The x axis spans the bins and the
// threshold.
func scorePlot(bins []Bin, threshold float64, label string) *plot {
	if len(bins) == 0 {
		return nil
	}
	lo, hi := bins[0].Lo, bins[0].Hi
	for _, b := range bins {
		hi = max(hi, b.Hi)
	}
	if !math.IsNaN(threshold) {
		lo, hi = min(lo, threshold), max(hi, threshold)
	}
	if hi == lo {
		hi = lo + 1
	}
	xs := func(v float64) float64 { return plotLeft + float64((v-lo)/(hi-lo)*(plotRight-plotLeft)) }
	counts := make([]int, len(bins))
	for i, b := range bins {
		counts[i] = b.Count
	}
	ys, yticks, log := countScale(counts)
	if label == "" {
		label = "score"
	}
	p := &plot{
		ID:     "scores-plot",
		Title:  "Histogram of " + label,
		XLabel: label,
		YLabel: "pairs",
		YTicks: yticks,
		Desc:   "Histogram of the verified pairs by " + label + " from " + formatFloat(lo) + " to " + formatFloat(hi),
	}
	if log {
		p.YLabel = "pairs (log scale)"
	}
	for _, b := range bins {
		x0, x1, y := xs(b.Lo), xs(b.Hi), ys(b.Count)
		p.Bars = append(p.Bars, bar{
			X: coord(x0 + 0.5), Y: coord(y), W: coord(max(x1-x0-1, 1)), H: coord(plotBottom - y),
			Tip: "[" + formatFloat(b.Lo) + ", " + formatFloat(b.Hi) + "): " + formatCount(b.Count) + plural(b.Count, " pair", " pairs"),
		})
	}
	// About eight ticks, but none finer than the bins: integer distances get integers.
	narrowest := hi - lo
	for _, b := range bins {
		if w := b.Hi - b.Lo; w > 0 {
			narrowest = min(narrowest, w)
		}
	}
	step := max(niceStep((hi-lo)/8), niceStep(narrowest))
	places := decimals(step)
	for i := int(math.Ceil(lo/step - 1e-9)); float64(i)*step <= hi+1e-9*step; i++ {
		v := float64(i) * step
		p.XTicks = append(p.XTicks, tick{coord(xs(v)), strconv.FormatFloat(v, 'f', places, 64)})
	}
	if !math.IsNaN(threshold) {
		x := xs(threshold)
		m := &marker{X: coord(x), Label: "threshold " + formatFloat(threshold), Anchor: "start"}
		if x > (plotLeft+plotRight)/2 {
			m.Anchor = "end"
		}
		p.Marker = m
		p.Desc += ", the threshold " + formatFloat(threshold) + " marked"
	}
	p.Desc += "; the table below has the numbers."
	return p
}

// countScale returns the y coordinate of a count, the y axis ticks and whether the scale
// is logarithmic, for counts from 0 to the largest of counts. The scale is logarithmic
// (in 1 + count, so 0 stays at the axis) when the largest count is at least 100 times the
// smallest one above 0.
func countScale(counts []int) (ys func(int) float64, ticks []tick, log bool) {
	top, least := 0, 0
	for _, c := range counts {
		top = max(top, c)
		if c > 0 && (least == 0 || c < least) {
			least = c
		}
	}
	var at func(int) float64 // the height of a count, 0 to 1
	var values []int
	if least > 0 && top >= 100*least {
		log = true
		values = []int{0}
		for v := 1; ; v *= 10 {
			values = append(values, v)
			if v >= top {
				break
			}
		}
		scale := math.Log1p(float64(values[len(values)-1]))
		at = func(c int) float64 { return math.Log1p(float64(c)) / scale }
	} else {
		step := max(1, int(niceStep(float64(top)/5)))
		for v := 0; ; v += step {
			values = append(values, v)
			if v >= top {
				break
			}
		}
		scale := float64(max(1, values[len(values)-1]))
		at = func(c int) float64 { return float64(c) / scale }
	}
	ys = func(c int) float64 { return plotBottom - float64(at(c)*(plotBottom-plotTop)) }
	for _, v := range values {
		ticks = append(ticks, tick{coord(ys(v)), formatCount(v)})
	}
	return ys, ticks, log
}

// niceStep returns the smallest of 1, 2 and 5 times a power of ten that is at least raw,
// or 1 if raw is not above 0. It finds the power by multiplying and dividing by ten, not
// with logarithms, whose last bits differ between architectures.
func niceStep(raw float64) float64 {
	if !(raw > 0) || math.IsInf(raw, 0) {
		return 1
	}
	mag := 1.0
	for mag*10 <= raw {
		mag *= 10
	}
	for mag > raw {
		mag /= 10
	}
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// decimals returns how many decimals the multiples of step need, step from niceStep.
func decimals(step float64) int {
	d := 0
	for ; step < 1-1e-9 && d < 20; step *= 10 {
		d++
	}
	return d
}

// coord formats a coordinate to a tenth of a unit. The coordinates are computed with
// explicit float64 conversions around products, which the Go spec says prevent fused
// multiply-adds, so the bytes are the same on every architecture.
func coord(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// plural returns one if n is 1 and many otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
