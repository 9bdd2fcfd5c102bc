package extract

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// scratchPage is an article page whose texts differ with i, so that a result that
// shared a pooled buffer with a later extraction would change.
func scratchPage(i int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<html><head><title>Page %d</title><meta name="author" content="Author %d"></head><body>`, i, i)
	fmt.Fprintf(&b, `<nav><a href="/">Home</a> <a href="/x">Other %d</a></nav><article><h1>Heading %d</h1>`, i, i)
	for p := range 3 + i%5 {
		fmt.Fprintf(&b, "<p>Paragraph %d of page %d says something &amp; more, with words enough to be read as the article's text: %s.</p>\n", p, i, strings.Repeat(fmt.Sprintf("w%d ", i*7+p), 20+i%13))
	}
	b.WriteString(`</article><footer>Footer text &copy; all rights</footer></body></html>`)
	return []byte(b.String())
}

// TestScratchReuse: pooled buffers never show through results. Each result is kept
// and checked again after many other pages were read, on several goroutines (run with
// -race), against a fresh reading of its page.
func TestScratchReuse(t *testing.T) {
	type kept struct {
		r   Result
		vis string
		vt  string
	}
	const pages = 40
	want := make([]kept, pages)
	for i := range pages {
		r, vis, err := ExtractVisible(scratchPage(i), Options{})
		if err != nil {
			t.Fatal(err)
		}
		vt, err := VisibleText(scratchPage(i), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want[i] = kept{r, vis, vt}
		if !strings.Contains(r.Text, fmt.Sprintf("of page %d says", i)) || r.Author != fmt.Sprintf("Author %d", i) || vis != vt {
			t.Fatalf("page %d: %+v, visible %q, VisibleText %q", i, r, vis, vt)
		}
	}
	var wg sync.WaitGroup
	got := make([][]kept, 4)
	for g := range got {
		wg.Go(func() {
			for i := range pages {
				r, vis, err := ExtractVisible(scratchPage(i), Options{})
				vt, err2 := VisibleText(scratchPage(i), Options{})
				if err != nil || err2 != nil {
					t.Error(err, err2)
					return
				}
				got[g] = append(got[g], kept{r, vis, vt})
			}
		})
	}
	wg.Wait()
	for g := range got {
		for i, k := range got[g] {
			if k != want[i] {
				t.Fatalf("goroutine %d, page %d: %+v\nwant %+v", g, i, k, want[i])
			}
		}
	}
	for i, k := range want {
		r, vis, _ := ExtractVisible(scratchPage(i), Options{})
		if (kept{r, vis, k.vt}) != k {
			t.Fatalf("page %d changed after later extractions: %+v", i, k)
		}
	}
}
