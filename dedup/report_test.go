package dedup

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/neardup/neardup"
)

// TestPickClustersNearFirst: the report's "largest" clusters are those a curator must
// judge, near-duplicate clusters by size then least similarity, before a larger cluster
// of exact copies, each shown with its least similar members first.
func TestPickClustersNearFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	base := func() []string {
		w := make([]string, 300)
		for i := range w {
			w[i] = fmt.Sprintf("w%d", r.IntN(100000))
		}
		return w
	}
	edit := func(w []string, n int) string {
		w = slices.Clone(w)
		for i := range n {
			w[i*7] = fmt.Sprintf("x%d", r.IntN(100000))
		}
		return strings.Join(w, " ")
	}
	a, b, c, d := base(), base(), base(), base()
	texts := map[string]string{}
	var order []string
	add := func(id, text string) { texts[id] = text; order = append(order, id) }
	add("a0", strings.Join(a, " "))
	for i := 1; i < 5; i++ {
		add(fmt.Sprintf("a%d", i), strings.ToUpper(strings.Join(a, " "))) // exact copies only
	}
	add("b0", strings.Join(b, " "))
	add("b1", edit(b, 2))
	add("b2", edit(b, 3))
	add("c0", strings.Join(c, " "))
	add("c1", edit(c, 2))
	add("c2", edit(c, 12)) // the least similar member of all
	add("d0", strings.Join(d, " "))
	add("d1", edit(d, 1))
	for i := range 20 { // documents in no cluster
		add(fmt.Sprintf("u%d", i), strings.Join(base(), " "))
	}
	next := 0
	res, err := Run(func() (neardup.Document, error) {
		if next == len(order) {
			return neardup.Document{}, io.EOF
		}
		id := order[next]
		next++
		return neardup.Document{ID: id, Text: texts[id]}, nil
	}, Options{Pipeline: neardup.Pipeline{Threshold: 0.5}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	largest, _ := pickClusters(res)
	var got []string
	for _, l := range largest {
		var ids []string
		for _, m := range l[1:] {
			ids = append(ids, res.Docs[m].ID)
		}
		got = append(got, strings.Join(ids, " "))
	}
	want := []string{"c0 c2 c1", "b0 b2 b1", "d0 d1", "a0 a1 a2 a3"}
	if !slices.Equal(got, want) {
		t.Fatalf("largest clusters (representative, shown members) %q, want %q", got, want)
	}
}

// TestReportBinsRounded: the report of a run labels its similarity bins k/50.
func TestReportBinsRounded(t *testing.T) {
	res := run(t, corpusDocs(3, 200), Options{Pipeline: neardup.Pipeline{Threshold: 0.82}})
	out := filepath.Join(t.TempDir(), "out")
	if _, err := WriteDir(out, res, DirOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, FileReport))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if !strings.Contains(page, `<td class="num">0.82</td><td class="num">0.84</td>`) || regexp.MustCompile(`\d\.\d*0000000\d`).MatchString(page) {
		t.Errorf("the report's bins are not labelled k/50:\n%s", regexp.MustCompile(`<td class="num">[^<]*</td>`).FindAllString(page, 12))
	}
}
