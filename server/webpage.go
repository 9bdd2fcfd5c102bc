package server

import (
	_ "embed"
	"maps"
	"net/url"
	"slices"

	"github.com/neardup/neardup/internal/htmlpage"
)

// The web page is written by Go code rather than html/template: executing a template
// looks methods up by reflection, which makes the linker keep every exported method of
// every type in the neardup binary (package htmlpage says more). Every value below goes
// through Text or a Printf argument, so it is escaped; only constants are markup.

//go:embed web.css
var webStyle string

// timeLayout is how the page shows fetch and last-seen times.
const timeLayout = "2006-01-02 15:04:05Z07:00"

// writeWebPage writes the page of data.
func writeWebPage(b *htmlpage.Builder, data *pageData) {
	b.Printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"+
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"+
		"<title>neardup</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>neardup</h1>\n", htmlpage.HTML(webStyle))
	if data.Status != "ready" {
		b.Printf("<p class=\"status\" id=\"status\">The index is %s; statistics, comparisons and look-ups answer once it is ready.</p>", data.Status)
	}
	b.Markup("\n\n")
	if data.Stats != nil {
		writeStats(b, data.Stats)
	}
	b.Markup("\n\n<section id=\"compare\">\n<h2>Compare two documents</h2>\n<form method=\"post\" action=\"/\" id=\"compare-form\">\n<div class=\"cols\">\n")
	checked := htmlpage.HTML("")
	if data.HTML {
		checked = " checked"
	}
	b.Printf("<label>A<br><textarea name=\"a\">%s</textarea></label>\n<label>B<br><textarea name=\"b\">%s</textarea></label>\n</div>\n"+
		"<p><label><input type=\"checkbox\" name=\"html\" value=\"1\"%s> the texts are HTML pages (compare their main content)</label>\n"+
		"<button type=\"submit\">Compare</button></p>\n</form>\n", data.A, data.B, checked)
	if data.CompError != "" {
		b.Printf("<p class=\"error\" id=\"compare-error\">%s</p>", data.CompError)
	}
	b.Markup("\n")
	if data.Compared != nil {
		writeComparison(b, data.Compared, data.Measures)
	}
	b.Printf("\n</section>\n\n<section id=\"lookup\">\n<h2>Look up a document</h2>\n<form method=\"get\" action=\"/\" id=\"lookup-form\">\n"+
		"<label>id <input name=\"id\" value=\"%s\" size=\"60\"></label> <button type=\"submit\">Look up</button>\n</form>\n", data.ID)
	if data.LookError != "" {
		b.Printf("<p class=\"error\" id=\"lookup-error\">%s</p>", data.LookError)
	}
	b.Markup("\n")
	if data.Doc != nil {
		writeDocument(b, data.Doc)
	}
	b.Markup("\n</section>\n\n<p><small>API: <a href=\"/openapi.json\">/openapi.json</a> · <a href=\"/metrics\">/metrics</a></small></p>\n</body>\n</html>\n")
}

// writeStats writes the index's statistics.
func writeStats(b *htmlpage.Builder, st *statsJSON) {
	b.Printf("\n<section id=\"stats\">\n<h2>Index</h2>\n<table>\n<tr><th>documents</th><td class=\"num\" id=\"documents\">%d</td></tr>\n"+
		"<tr><th>verdicts since start</th><td class=\"num\">", st.Documents)
	for _, k := range slices.Sorted(maps.Keys(st.Verdicts)) {
		b.Printf("<span class=\"verdict\">%s %d</span>", k, st.Verdicts[k])
	}
	o := st.Options
	b.Printf("</td></tr>\n<tr><th>near rule</th><td>%s: SimHash distance ≤ %d, MinHash similarity ≥ %v (K=%d)</td></tr>\n"+
		"<tr><th>keep policy</th><td>%s</td></tr>\n<tr><th>max age</th><td>", o.Near, o.Distance, o.Threshold, o.MinHashK, o.Keep)
	if o.MaxAgeSeconds != 0 {
		b.Printf("%v s", o.MaxAgeSeconds)
	} else {
		b.Markup("none")
	}
	b.Printf("</td></tr>\n<tr><th>store</th><td>%s %s</td></tr>\n<tr><th>uptime</th><td class=\"num\">%.0f s</td></tr>\n</table>\n</section>\n",
		st.Store.Kind, st.Store.Path, st.UptimeSeconds)
}

// writeComparison writes the table of measures and the word diff of two documents.
func writeComparison(b *htmlpage.Builder, c *comparison, rows [][2]string) {
	b.Markup("\n<table id=\"measures\">\n<tr><th>measure</th><th>value</th></tr>\n")
	for _, r := range rows {
		b.Printf("<tr><td>%s</td><td class=\"num\">%s</td></tr>\n", r[0], r[1])
	}
	b.Printf("</table>\n<h3>Word differences of the main texts</h3>\n"+
		"<p>%d words only in A (<del>struck through</del>), %d only in B (<ins>underlined</ins>)", c.Diff.Deleted, c.Diff.Inserted)
	if c.Diff.Partial {
		b.Markup("; the texts are long, so only their beginnings are compared")
	}
	b.Markup(".</p>\n<div class=\"cols\" id=\"diff\">\n<div class=\"diff\" id=\"diff-a\">")
	b.Segments(c.Diff.Left, "del")
	b.Markup("</div>\n<div class=\"diff\" id=\"diff-b\">")
	b.Segments(c.Diff.Right, "ins")
	b.Markup("</div>\n</div>\n")
}

// writeDocument writes a stored document and its near-duplicates, each a link to its own
// look-up.
func writeDocument(b *htmlpage.Builder, d *storedJSON) {
	b.Printf("\n<table id=\"document\">\n<tr><th>id</th><td><code>%s</code></td></tr>\n", d.ID)
	if d.URL != "" {
		b.Printf("<tr><th>canonical URL</th><td><code>%s</code></td></tr>", d.URL)
	}
	b.Markup("\n")
	if d.Title != "" {
		b.Printf("<tr><th>title</th><td>%s</td></tr>", d.Title)
	}
	b.Printf("\n<tr><th>words</th><td class=\"num\">%d</td></tr>\n<tr><th>priority</th><td class=\"num\">%v</td></tr>\n"+
		"<tr><th>fetched</th><td>%s</td></tr>\n<tr><th>last seen</th><td>%s</td></tr>\n"+
		"<tr><th>SimHash</th><td><code>%s</code></td></tr>\n<tr><th>main-text SHA-256</th><td><code>%s</code></td></tr>\n</table>\n<h3>Near-duplicates</h3>\n",
		d.Words, d.Priority, d.FetchTime.Format(timeLayout), d.LastSeen.Format(timeLayout), d.SimHash, d.Hashes.Main)
	if len(d.Near) == 0 {
		b.Markup("<p id=\"no-near\">None in the index.</p>\n")
		return
	}
	b.Markup("\n<table id=\"near\">\n<tr><th>id</th><th>URL</th><th>SimHash distance</th><th>MinHash similarity</th></tr>\n")
	for _, m := range d.Near {
		// The id is a query parameter: escaped for the URL, then for the attribute.
		b.Printf("<tr class=\"near\"><td><a href=\"/?id=%s\">%s</a></td><td>%s</td><td class=\"num\">%d</td><td class=\"num\">%.4f</td></tr>\n",
			url.QueryEscape(m.ID), m.ID, m.URL, m.Distance, m.Similarity)
	}
	b.Markup("</table>\n\n")
}
