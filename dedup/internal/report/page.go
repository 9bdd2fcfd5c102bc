package report

import (
	_ "embed"

	"github.com/neardup/neardup/internal/htmlpage"
	"github.com/neardup/neardup/internal/measure"
)

// The page is written by Go code rather than html/template: executing a template looks
// methods up by reflection, which makes the linker keep every exported method of every
// type in the neardup binary (package htmlpage says more). Every value below goes
// through Text or a Printf argument, so it is escaped; only constants are markup.

//go:embed report.css
var style string

// writePage writes the whole page of v.
func writePage(b *htmlpage.Builder, v view) {
	b.Markup("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n" +
		"<meta name=\"generator\" content=\"neardup\">\n")
	b.Printf("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>%s</h1>\n",
		v.Title, htmlpage.HTML(style), v.Title)
	b.Markup(`<nav><a href="#summary">Summary</a> <a href="#sizes">Cluster sizes</a> <a href="#scores">Scores</a> <a href="#largest">Largest clusters</a> <a href="#borderline">Borderline clusters</a> <a href="#mirrors">Mirrors</a></nav>
</header>
<main>
<section id="summary">
<h2>Summary</h2>
<div class="cols">
<table class="fields">
<caption>Counts and costs</caption>
<tbody>`)
	writeFields(b, v.Summary)
	b.Markup("<table class=\"fields\" id=\"parameters\">\n<caption>Parameters</caption>\n<tbody>")
	writeFields(b, v.Params)
	b.Markup("</div>\n</section>\n<section id=\"sizes\">\n<h2>Cluster sizes</h2>")
	writePlotOr(b, v.SizePlot, "No clusters.")
	if len(v.Sizes) > 0 {
		b.Markup("\n<details class=\"numbers\">\n<summary>The numbers</summary>\n<table>\n" +
			`<thead><tr><th scope="col" class="num">Size</th><th scope="col" class="num">Clusters</th></tr></thead>` +
			"\n<tbody>")
		for _, s := range v.Sizes {
			b.Printf("\n<tr><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>", formatCount(s.Size), formatCount(s.Count))
		}
		b.Markup("\n</tbody>\n</table>\n</details>")
	}
	b.Markup("\n</section>\n<section id=\"scores\">\n<h2>Scores of the verified pairs</h2>")
	writePlotOr(b, v.ScorePlot, "No pairs.")
	writeBins(b, v)
	b.Markup("\n</section>\n<section id=\"largest\">\n<h2>Largest clusters</h2>\n<p>The clusters to read first: " +
		"the largest that hold near duplicates, whose threshold a reader judges, their least similar " +
		"members first; clusters of exact copies only come after them.</p>")
	writeClusters(b, v.Largest)
	b.Markup("\n</section>\n<section id=\"borderline\">\n<h2>Borderline clusters</h2>")
	writeClusters(b, v.Borderline)
	b.Markup("\n</section>\n<section id=\"mirrors\">\n<h2>Mirrors</h2>")
	writeMirrors(b, v.Mirrors)
	b.Markup("\n</section>\n</main>\n<footer>Written by neardup. This page is self-contained: " +
		"it loads nothing and runs no script.</footer>\n</body>\n</html>\n")
}

// writeFields writes the rows of a table of fields and closes the table.
func writeFields(b *htmlpage.Builder, fs []Field) {
	for _, f := range fs {
		b.Printf("\n<tr><th scope=\"row\">%s</th><td>%s</td></tr>", f.Name, f.Value)
	}
	if len(fs) == 0 {
		b.Markup("\n<tr><td class=\"none\">None given.</td></tr>")
	}
	b.Markup("\n</tbody>\n</table>\n")
}

// writePlotOr writes p, or a paragraph saying none if p is nil.
func writePlotOr(b *htmlpage.Builder, p *plot, none string) {
	if p == nil {
		b.Printf("\n<p class=\"none\">%s</p>", none)
		return
	}
	b.Printf("\n<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-labelledby=\"%s-title %s-desc\">",
		plotWidth, plotHeight, plotWidth, plotHeight, p.ID, p.ID)
	b.Printf("\n<title id=\"%s-title\">%s</title>\n<desc id=\"%s-desc\">%s</desc>", p.ID, p.Title, p.ID, p.Desc)
	for _, t := range p.YTicks {
		b.Printf("\n<line class=\"grid\" x1=\"%d\" y1=\"%s\" x2=\"%d\" y2=\"%s\"/><text x=\"%d\" y=\"%s\" dx=\"-6\" dy=\"4\" text-anchor=\"end\">%s</text>",
			plotLeft, t.Pos, plotRight, t.Pos, plotLeft, t.Pos, t.Label)
	}
	for _, r := range p.Bars {
		b.Printf("\n<rect class=\"bar\" x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\"><title>%s</title></rect>", r.X, r.Y, r.W, r.H, r.Tip)
	}
	b.Printf("\n<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", plotLeft, plotBottom, plotRight, plotBottom)
	b.Printf("\n<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", plotLeft, plotTop, plotLeft, plotBottom)
	for _, t := range p.XTicks {
		b.Printf("\n<line class=\"axis\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/><text x=\"%s\" y=\"%d\" dy=\"16\" text-anchor=\"middle\">%s</text>",
			t.Pos, plotBottom, t.Pos, plotBottom+4, t.Pos, plotBottom, t.Label)
	}
	if m := p.Marker; m != nil {
		dx := "5"
		if m.Anchor == "end" {
			dx = "-5"
		}
		b.Printf("\n<line class=\"marker\" x1=\"%s\" y1=\"%d\" x2=\"%s\" y2=\"%d\"/><text class=\"marker-label\" x=\"%s\" y=\"%d\" dx=\"%s\" dy=\"10\" text-anchor=\"%s\">%s</text>",
			m.X, plotTop, m.X, plotBottom, m.X, plotTop, dx, m.Anchor, m.Label)
	}
	b.Printf("\n<text class=\"label\" x=\"%d\" y=\"%d\" dy=\"-8\" text-anchor=\"middle\">%s</text>", (plotLeft+plotRight)/2, plotHeight, p.XLabel)
	// The y label is rotated by -90°, so its x runs down the plot.
	b.Printf("\n<text class=\"label\" transform=\"rotate(-90)\" x=\"%d\" y=\"14\" text-anchor=\"middle\">%s</text>\n</svg>", -(plotTop+plotBottom)/2, p.YLabel)
}

// writeBins writes the table of the histogram's numbers, if it has any.
func writeBins(b *htmlpage.Builder, v view) {
	if len(v.BinRows) == 0 {
		return
	}
	b.Markup("\n<details class=\"numbers\">\n<summary>The numbers")
	if v.Threshold != "" {
		b.Printf(" (threshold %s)", v.Threshold)
	}
	b.Markup("</summary>\n<table>\n" +
		`<thead><tr><th scope="col" class="num">From</th><th scope="col" class="num">Below</th><th scope="col" class="num">Pairs</th></tr></thead>` +
		"\n<tbody>")
	for _, r := range v.BinRows {
		b.Printf("\n<tr><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>", r.Lo, r.Hi, r.Count)
	}
	b.Markup("\n</tbody>\n</table>\n</details>")
}

// writeClusters writes each cluster of cs, or a paragraph saying none.
func writeClusters(b *htmlpage.Builder, cs []clusterView) {
	for _, c := range cs {
		writeCluster(b, c)
	}
	if len(cs) == 0 {
		b.Markup("\n<p class=\"none\">None.</p>")
	}
}

// writeCluster writes c as a <details> element: its representative, then each member
// shown side by side with it, or the representative's text alone if none is.
func writeCluster(b *htmlpage.Builder, c clusterView) {
	open := htmlpage.HTML("")
	if c.Open {
		open = " open"
	}
	b.Printf("\n<details class=\"cluster\" id=\"%s\"%s>\n<summary>Cluster %s: %s documents, %d shown</summary>", c.Anchor, open, c.ID, c.Size, c.Shown)
	r := c.Representative
	b.Printf("\n<p class=\"doc\">Representative <bdi class=\"score\">%s</bdi>", r.ID)
	if r.URL != "" {
		b.Printf(" <bdi>%s</bdi>", r.URL)
	}
	b.Markup("</p>")
	for _, p := range c.Pairs {
		words := htmlpage.HTML("words")
		if p.Deleted == 1 {
			words = "word"
		}
		b.Printf("\n<table class=\"pair\">\n<caption>%d %s only in the representative, %d only in the member", p.Deleted, words, p.Inserted)
		if p.Partial {
			b.Printf("; differences past the first %d tokens are not marked", measure.MaxDiffTokens)
		}
		b.Printf("</caption>\n<thead><tr><th scope=\"col\">Representative <bdi>%s</bdi></th><th scope=\"col\">Member <bdi class=\"score\">%s</bdi>", r.ID, p.Member.ID)
		if p.Member.Score != "" {
			b.Printf(" at <span class=\"score\">%s</span>", p.Member.Score)
		}
		if p.Member.URL != "" {
			b.Printf(" <bdi>%s</bdi>", p.Member.URL)
		}
		b.Markup("</th></tr></thead>\n<tbody><tr><td><div class=\"text\" dir=\"auto\">")
		b.Segments(p.Left, "del")
		b.Markup("</div></td><td><div class=\"text\" dir=\"auto\">")
		b.Segments(p.Right, "ins")
		b.Markup("</div></td></tr></tbody>\n</table>")
	}
	if len(c.Pairs) == 0 {
		b.Markup("\n<div class=\"text\" dir=\"auto\">")
		b.Text(r.Text)
		b.Markup("</div>")
	}
	b.Markup("\n</details>")
}

// writeMirrors writes the table of mirrors, or a paragraph saying none was found.
func writeMirrors(b *htmlpage.Builder, ms []mirrorRow) {
	if len(ms) == 0 {
		b.Markup("\n<p class=\"none\">None found.</p>")
		return
	}
	b.Markup("\n<table>\n<thead><tr><th scope=\"col\">Site A</th><th scope=\"col\">Site B</th>" +
		`<th scope="col" class="num">Shared paths</th><th scope="col" class="num">Same content</th><th scope="col" class="num">Score</th><th scope="col" class="num">Coverage</th></tr></thead>` +
		"\n<tbody>")
	for _, m := range ms {
		b.Printf("\n<tr><td><bdi>%s</bdi></td><td><bdi>%s</bdi></td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td><td class=\"num\">%s</td></tr>",
			m.A, m.B, m.Shared, m.Same, m.Score, m.Coverage)
	}
	b.Markup("\n</tbody>\n</table>")
}
