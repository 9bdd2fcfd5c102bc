package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHTMLPagesSameNames: two directories whose pages have the same file names (two
// versions of a manual) give all their pages, in input order; a text file is skipped.
func TestHTMLPagesSameNames(t *testing.T) {
	var dirs []string
	for _, v := range []string{"v1", "v2"} {
		dir := filepath.Join(t.TempDir(), v)
		os.Mkdir(dir, 0o755)
		for _, name := range []string{"a.html", "b.html"} {
			page := "<html><body><p>" + v + " " + name + "</p></body></html>"
			if err := os.WriteFile(filepath.Join(dir, name), []byte(page), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a page"), 0o644)
		dirs = append(dirs, dir)
	}
	pages, err := HTMLPages(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pages {
		got = append(got, string(p))
	}
	want := []string{"v1 a.html", "v1 b.html", "v2 a.html", "v2 b.html"}
	if len(got) != len(want) {
		t.Fatalf("%d pages, want %d: %q", len(got), len(want), got)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], `"html":"<html><body><p>`+w+`</p>`) {
			t.Errorf("page %d: %s, want the page of %s", i, got[i], w)
		}
	}
}
