package evaldata

import (
	"math"
	"strings"
	"testing"

	"github.com/neardup/neardup/minhash"
)

func TestVisibleText(t *testing.T) {
	page := `<html><head><title>T</title><style>p{}</style><script>var x="<p>";</script></head>
<body><!-- c --><p>Hello &amp; <b>wo</b>rld</p><noscript>n</noscript></body></html>`
	got := strings.Join(strings.Fields(VisibleText(page)), " ")
	if want := "T Hello & wo rld n"; got != want {
		t.Errorf("VisibleText = %q, want %q", got, want)
	}
}

// loadDebian returns the evaluation root and debian-doc-versions, or fails the test.
func loadDebian(t *testing.T) (string, []Doc, []Pair) {
	t.Helper()
	root, err := Root()
	Need(t, err)
	docs, pairs, err := Debian(root)
	if err != nil {
		t.Fatal(err)
	}
	return root, docs, pairs
}

func TestLoaders(t *testing.T) {
	root, docs, pairs := loadDebian(t)
	// SOURCE.md: 89 + 92 clang pages, 1167 + 1169 postgresql pages.
	if len(docs) != 89+92+1167+1169 || len(pairs) < 1000 {
		t.Errorf("Debian: %d docs, %d pairs", len(docs), len(pairs))
	}
	ids := map[string]bool{}
	for _, d := range docs {
		ids[d.ID] = true
	}
	for _, p := range pairs {
		if !ids[p.A] || !ids[p.B] || p.Jaccard < 0.5 || p.Jaccard > 1 {
			t.Fatalf("Debian pair %+v does not name loaded documents", p)
		}
	}
	spam, spamPairs, err := Spam(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(spam) != 3250 || len(spamPairs) != 775 {
		t.Errorf("Spam: %d docs, %d pairs; SOURCE.md says 3250 and 775", len(spam), len(spamPairs))
	}
	answers, err := Clough(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 60 {
		t.Errorf("Clough: %d texts, want 57 answers + 3 sources", len(answers))
	}
	for _, a := range answers {
		if strings.TrimSpace(a.Text) == "" || a.Task == "" || a.Category == "" {
			t.Errorf("Clough: empty %+v", a.ID)
		}
	}
}

// TestReferenceReproduced checks that VisibleText and RefShingles give back the labelled
// Jaccard of every reference pair of debian-doc-versions, so that accuracy measured against
// the labels is measured against the definition the labels use.
func TestReferenceReproduced(t *testing.T) {
	_, docs, pairs := loadDebian(t)
	feats := map[string][]uint64{}
	for _, d := range docs {
		feats[d.ID] = RefShingles(d.Text)
	}
	bad := 0
	for _, p := range pairs {
		j := minhash.Jaccard(feats[p.A], feats[p.B])
		if math.Abs(j-p.Jaccard) > 0.00005 {
			bad++
			t.Logf("%s ~ %s: %.4f, labelled %.4f", p.A, p.B, j, p.Jaccard)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d reference pairs not reproduced", bad, len(pairs))
	}
}
