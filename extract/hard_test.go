package extract_test

import (
	"strings"
	"testing"

	"github.com/neardup/neardup/extract"
)

// The pages below were written for these tests: each is a kind of page on which
// main-content extractors are known to lose the article or keep the boilerplate.

// page wraps an article's markup in a site template: navigation, a sidebar of links
// and a footer.
func page(title, main string) string {
	return `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>` + title + ` | Example Site</title></head><body>
<header class="site-header"><a href="/">Example Site</a><nav><ul><li><a href="/news">News</a></li><li><a href="/docs">Docs</a></li><li><a href="/about">About us</a></li></ul></nav></header>
<div class="layout">` + main + `
<div class="sidebar"><h3>Popular</h3><ul><li><a href="/a">Ten tips for spring gardens</a></li><li><a href="/b">Why the tram was late again</a></li><li><a href="/c">A guide to the city's bakeries</a></li></ul></div>
</div>
<footer class="site-footer"><p>Copyright Example Site. All rights reserved.</p><a href="/privacy">Privacy</a></footer>
</body></html>`
}

func extractText(t *testing.T, html string) extract.Result {
	t.Helper()
	r, err := extract.Extract([]byte(html), extract.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func checkText(t *testing.T, text string, keep, drop []string) {
	t.Helper()
	for _, s := range keep {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	for _, s := range drop {
		if strings.Contains(text, s) {
			t.Errorf("text keeps %q:\n%s", s, text)
		}
	}
}

var boilerplate = []string{"About us", "Ten tips", "All rights reserved", "Privacy"}

// TestExtractMathML: formulas written in MathML are part of the text, their tokens
// separated, and their TeX annotation is not repeated.
func TestExtractMathML(t *testing.T) {
	r := extractText(t, page("Energy and mass", `<article><h1>Energy and mass</h1>
<p>The best known equation of physics relates the energy of a body at rest to its mass, with the speed of light squared as the factor between them:</p>
<p><math display="block"><semantics><mrow><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></mrow><annotation encoding="application/x-tex">E = mc^2</annotation></semantics></math></p>
<p>For a body in motion, the energy grows with the Lorentz factor <math><mi>γ</mi></math>, and the formula becomes <math><mi>E</mi><mo>=</mo><mi>γ</mi><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></math>, which reduces to the first when the speed is zero.</p>
</article>`))
	checkText(t, r.Text, []string{"E = m c 2", "factor γ, and", "E = γ m c 2"}, append([]string{"mc^2"}, boilerplate...))
}

// TestExtractListPost: a post whose body is a list keeps its items.
func TestExtractListPost(t *testing.T) {
	items := []string{
		"Start seedlings indoors six weeks before the last frost, on a sunny window sill.",
		"Harden them off for a week, a few hours outside each day, before planting out.",
		"Water deeply twice a week rather than a little every day, so that roots grow down.",
		"Mulch around the stems with straw to keep the soil moist and the weeds away.",
		"Pinch out the side shoots of tomatoes, so that the plant puts its energy in fruit.",
	}
	var b strings.Builder
	for _, it := range items {
		b.WriteString("<li>" + it + "</li>\n")
	}
	r := extractText(t, page("Five tips for tomatoes", `<div class="post"><h1>Five tips for tomatoes</h1><ol>`+b.String()+`</ol></div>`))
	checkText(t, r.Text, items, boilerplate)
}

// TestExtractCommentThread: a long comment thread after a short article is not taken
// for the article.
func TestExtractCommentThread(t *testing.T) {
	var b strings.Builder
	for i := range 30 {
		b.WriteString(`<li class="comment"><div class="comment-author">Reader ` + string(rune('A'+i%26)) + `</div><div class="comment-body"><p>I have lived next to that bridge for twenty years, and I can say that the repairs, however slow, were needed; thank you for covering it, and for asking the council the questions nobody else asked.</p></div></li>`)
	}
	r := extractText(t, page("The bridge reopens", `<article><h1>The bridge reopens</h1>
<p>The old stone bridge over the river reopened on Monday after eighteen months of repairs, which cost twice what the council had planned.</p>
<p>Engineers replaced two of its five arches and the whole deck; cars may cross again, but lorries will have to keep using the ring road.</p>
</article>
<section id="comments"><h2>30 comments</h2><ol class="comment-list">`+b.String()+`</ol></section>`))
	checkText(t, r.Text, []string{"reopened on Monday", "keep using the ring road"}, append([]string{"twenty years", "Reader"}, boilerplate...))
}

// TestExtractCJK: an article in Chinese, whose sentences have no spaces and whose
// commas are full-width, is found as one in English is.
func TestExtractCJK(t *testing.T) {
	paras := []string{
		"今年春天，城市的公园里开满了樱花，很多市民在周末带着家人来到这里散步，拍照，享受温暖的阳光。",
		"公园管理处表示，为了保护花木，游客不要攀折树枝，也不要在草坪上生火做饭，垃圾请带走或者放进垃圾桶。",
		"据统计，上个周末来公园赏花的人数超过了十万人次，比去年同期增加了三成，附近的地铁站也因此十分拥挤。",
	}
	main := `<article><h1>公园樱花盛开</h1><p>` + strings.Join(paras, "</p><p>") + `</p></article>`
	r := extractText(t, page("公园樱花盛开", main))
	checkText(t, r.Text, paras, boilerplate)
	if r.Title != "公园樱花盛开" {
		t.Errorf("title %q", r.Title)
	}
}

// TestExtractSplitArticle: an article cut by ads, a figure and a "read also" box keeps
// all its paragraphs and its figure's caption, and loses the ads and the box.
func TestExtractSplitArticle(t *testing.T) {
	paras := []string{
		"The night train from Vienna to Brussels runs again from December, after a pause of three years, three times a week.",
		"Tickets go on sale next month; a couchette costs about the price of a flight, a sleeper cabin twice as much.",
		"The operator says it will add a fourth night once it has the carriages, which are still being built in Austria.",
		"Rail unions welcomed the news, but asked for more staff on board, since one conductor serves the whole train at night.",
	}
	main := `<article><div class="article-body"><h1>Night trains return</h1>
<p>` + paras[0] + `</p>
<div class="ad-slot"><span>Advertisement</span><a href="https://ads.example/x">Buy cheap flights now</a></div>
<p>` + paras[1] + `</p>
<figure><img src="train.jpg" alt=""><figcaption>The new sleeper carriages at the factory</figcaption></figure>
<p>` + paras[2] + `</p>
<div class="related"><h4>Read also</h4><ul><li><a href="/x">Trams in winter</a></li><li><a href="/y">Airport strike ends</a></li></ul></div>
<p>` + paras[3] + `</p>
</div></article>`
	r := extractText(t, page("Night trains return", main))
	checkText(t, r.Text, paras, append([]string{"Advertisement", "cheap flights", "Read also", "Trams in winter"}, boilerplate...))
}

// TestExtractDocStubs: two documentation stub pages with the same template and the same
// stub notice, which differ only outside the main block (their titles, the navigation
// to their neighbours), are not given the same text: two unrelated stubs must not be
// exact duplicates.
func TestExtractDocStubs(t *testing.T) {
	stub := func(title, prev, next string) string {
		return `<html><head><title>` + title + ` - Manual</title></head><body>
<div class="navheader"><table><tr><td><a href="p.html">Prev: ` + prev + `</a></td><td><a href="n.html">Next: ` + next + `</a></td></tr></table></div>
<div class="sect1"><h2 class="title">` + title + `</h2>
<p>This section has not been written yet. The options it describes are listed in the reference pages, and the examples in the tutorial show how they are used.</p>
</div>
<div class="navfooter"><a href="index.html">Home</a></div></body></html>`
	}
	a := extractText(t, stub("Connection settings", "Overview", "Logging"))
	b := extractText(t, stub("Replication slots", "Archiving", "Monitoring"))
	if a.Text == b.Text {
		t.Errorf("two different stub pages have the same text %q (method %s)", a.Text, a.Method)
	}
	for _, r := range []extract.Result{a, b} {
		checkText(t, r.Text, []string{"has not been written yet"}, nil)
	}
}

// TestExtractTableIntro: a reference page whose body is a table keeps the paragraphs
// that introduce it, which tell two pages with the same table layout apart.
func TestExtractTableIntro(t *testing.T) {
	var rows strings.Builder
	for _, c := range []string{"owner", "name", "kind", "created", "size"} {
		rows.WriteString(`<tr><td><p><code>` + c + `</code> text</p><p>The ` + c + ` of the object, as the catalog records it when the object is created or altered.</p></td></tr>`)
	}
	ref := func(view, intro string) string {
		return `<html><body><div class="navheader"><a href="p.html">Prev</a> <a href="n.html">Next</a></div>
<div class="sect1"><div class="titlepage"><h2>` + view + `</h2></div><p>` + intro + `</p>
<div class="table"><p class="title">Columns of ` + view + `</p><div class="table-contents"><table><tbody>` + rows.String() + `</tbody></table></div></div></div></body></html>`
	}
	a := extractText(t, ref("object_grants", "The view object_grants lists every privilege granted on an object to a role that is enabled now, one row per grant."))
	b := extractText(t, ref("object_owners", "The view object_owners lists the owner of every object that the current role can see, one row per object and owner."))
	checkText(t, a.Text, []string{"lists every privilege granted", "as the catalog records it"}, []string{"Prev"})
	if a.Text == b.Text {
		t.Errorf("two reference pages with different introductions have the same text:\n%s", a.Text)
	}
}

// TestExtractPermalinks: the permalink anchors documentation generators put in every
// heading (Sphinx's pilcrow, a section sign, a hash) are not text: neither the title
// nor a section heading ends with one, and a pilcrow in the prose stays.
func TestExtractPermalinks(t *testing.T) {
	r := extractText(t, page("Configuring the resolver", `<div class="body" role="main"><section id="configuring-the-resolver">
<h1>Configuring the resolver<a class="headerlink" href="#configuring-the-resolver" title="Link to this heading">¶</a></h1>
<p>The resolver reads its settings from the configuration file at start-up, and again whenever the service receives a reload signal, so that a change takes effect without a restart.</p>
<section id="timeouts"><h2>Timeouts <a class="headerlink" href="#timeouts" title="Permalink to this headline"> ¶ </a></h2>
<p>Each query waits at most the configured number of seconds for an answer before the resolver tries the next server in the list, and gives up after three rounds.</p></section>
<section id="cache"><h2>Cache<a href="#cache" class="anchor">§</a></h2>
<p>Answers are kept for as long as their time to live allows; the pilcrow ¶ in this sentence is part of the text, and so is <a href="#timeouts">the section on timeouts</a>.</p>
<h3 id="size">Size <a class="anchor-link" href="#size">#</a></h3>
<p>The cache holds ten thousand answers by default, and evicts the least recently used when it is full.</p></section>
</section></div>`))
	if r.Title != "Configuring the resolver" {
		t.Errorf("title %q, want %q", r.Title, "Configuring the resolver")
	}
	checkText(t, r.Text, []string{"Timeouts\nEach query", "Cache\nAnswers", "Size\nThe cache", "the pilcrow ¶ in this sentence", "the section on timeouts"},
		append([]string{"resolver¶", "Timeouts ¶", "Cache§", "Size #"}, boilerplate...))
}
