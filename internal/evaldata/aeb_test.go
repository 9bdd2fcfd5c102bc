package evaldata

import (
	"bytes"
	"testing"
)

func TestAEB(t *testing.T) {
	root, err := Root()
	Need(t, err)
	pages, err := AEB(root)
	if err != nil {
		t.Fatal(err)
	}
	// SOURCE.md: 181 pages, each with an article body and a URL.
	if len(pages) != 181 {
		t.Fatalf("AEB: %d pages, want 181", len(pages))
	}
	for i, p := range pages {
		if len(p.ID) != 64 || p.URL == "" || p.Body == "" || !bytes.Contains(bytes.ToLower(p.HTML[:min(len(p.HTML), 4096)]), []byte("<html")) {
			t.Errorf("page %s: URL %q, %d bytes of body, HTML starting %.40q", p.ID, p.URL, len(p.Body), p.HTML)
		}
		if i > 0 && pages[i-1].ID >= p.ID {
			t.Errorf("pages not sorted by ID at %d", i)
		}
	}
}
