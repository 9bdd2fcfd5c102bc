//go:build unix

package report

import (
	"bytes"
	"flag"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/neardup/neardup/internal/chromium"
)

var keepScreenshot = flag.String("screenshot", "", "copy TestChromium's screenshot to this PNG file, to look at")

// TestChromium renders the test report in headless Chromium: the DOM it builds must have
// every section, both plots and no element that came from a hostile text, and its
// screenshot must show the page, plots included.
func TestChromium(t *testing.T) {
	browser := chromium.Path(t)
	page := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(page, write(t, testData()), 0o644); err != nil {
		t.Fatal(err)
	}

	t.Run("dom", func(t *testing.T) {
		t.Parallel()
		dom := chromium.Run(t, browser, "file://"+page, "--dump-dom")
		doc, err := html.Parse(bytes.NewReader(dom))
		if err != nil {
			t.Fatal(err)
		}
		ids, elements := chromium.Inventory(t, doc, allowedElements)
		for _, id := range []string{"summary", "parameters", "sizes", "scores", "largest", "borderline", "mirrors",
			"sizes-plot-title", "scores-plot-title", "largest-1", "largest-2", "borderline-1"} {
			if !ids[id] {
				t.Errorf("chromium's DOM has no element with id %q", id)
			}
		}
		if elements["svg"] != 2 || elements["rect"] != 11 || elements["del"] == 0 || elements["ins"] == 0 {
			t.Errorf("chromium's DOM has %d svg, %d rect, %d del and %d ins elements; want 2, 11 and some of each",
				elements["svg"], elements["rect"], elements["del"], elements["ins"])
		}
		if text := textOf(doc); !strings.Contains(text, `<script>alert("x")</script>`) || !strings.Contains(text, "</textarea>") {
			t.Error("chromium's DOM does not show the hostile texts as text")
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		t.Parallel()
		shot := filepath.Join(t.TempDir(), "report.png")
		chromium.Run(t, browser, "file://"+page, "--screenshot="+shot, "--window-size=1280,1600")
		if *keepScreenshot != "" {
			defer copyFile(t, shot, *keepScreenshot)
		}
		f, err := os.Open(shot)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		img, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 1600 {
			t.Fatalf("screenshot is %dx%d, want 1280x1600", b.Dx(), b.Dy())
		}
		ink, bars := inkAndBars(img)
		total := 1280 * 1600
		// Text, tables and plots cover a few percent of the window; the plots' bars
		// are blue blocks of several thousand pixels.
		if ink < total/50 || bars < 5000 {
			t.Errorf("screenshot has %d non-white pixels of %d and %d in the bars' colour; the page did not render", ink, total, bars)
		}
	})
}

// inkAndBars counts the pixels of img that are not white, and those in the colour of the
// plots' bars (#3b6ea5, give or take antialiasing).
func inkAndBars(img image.Image) (ink, bars int) {
	near := func(a uint32, b int) bool { d := int(a>>8) - b; return d > -12 && d < 12 }
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r < 0xf000 || g < 0xf000 || bl < 0xf000 {
				ink++
			}
			if near(r, 0x3b) && near(g, 0x6e) && near(bl, 0xa5) {
				bars++
			}
		}
	}
	return ink, bars
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, data, 0o644)
	}
	if err != nil {
		t.Error(err)
	}
}
