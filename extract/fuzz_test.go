package extract_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/neardup/neardup/extract"
)

// FuzzExtract feeds arbitrary bytes to Extract and VisibleText. Neither may panic; the
// only errors are the limits' and ErrBinary, which both give for the same pages; every
// text is valid UTF-8 and normalized; the same page gives the same text. The seed corpus
// in testdata/fuzz/FuzzExtract holds hostile pages: unclosed tags, deep nesting, a huge
// attribute, invalid UTF-8, NUL bytes, legacy and bogus charset declarations, UTF-16
// with a BOM and UTF-16 declared by the header without one, a PNG image.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(article), "")
	f.Add([]byte("<meta charset=koi8-r><p>\xf0\xd2\xc9\xd7\xc5\xd4</p>"), "text/html; charset=koi8-r")
	f.Fuzz(func(t *testing.T, page []byte, contentType string) {
		opts := extract.Options{ContentType: contentType, MaxBytes: 1 << 20}
		r, err := extract.Extract(page, opts)
		switch {
		case errors.Is(err, extract.ErrTooLarge), errors.Is(err, extract.ErrBinary), errors.Is(err, extract.ErrTooDeep), errors.Is(err, extract.ErrTimeout):
		case err != nil:
			t.Fatalf("Extract: unexpected error %v", err)
		default:
			for name, s := range map[string]string{"Text": r.Text, "Title": r.Title, "Author": r.Author, "Description": r.Description} {
				checkNormalized(t, name, s)
			}
			if r.Method != extract.MethodMain && r.Method != extract.MethodVisibleText {
				t.Errorf("Method %q", r.Method)
			}
			if again, err := extract.Extract(page, opts); err == nil && again.Text != r.Text {
				t.Errorf("Extract is not deterministic: %q, then %q", r.Text, again.Text)
			}
		}
		binary := errors.Is(err, extract.ErrBinary)
		text, err := extract.VisibleText(page, opts)
		if err != nil && !errors.Is(err, extract.ErrTooLarge) && !errors.Is(err, extract.ErrBinary) {
			t.Fatalf("VisibleText: unexpected error %v", err)
		}
		if errors.Is(err, extract.ErrBinary) != binary && !errors.Is(err, extract.ErrTooLarge) {
			t.Fatalf("VisibleText's ErrBinary is %v, Extract's %v", !binary, binary)
		}
		checkNormalized(t, "VisibleText", text)
	})
}

// checkNormalized fails t unless s is valid UTF-8 in the form Result.Text documents.
func checkNormalized(t *testing.T, name, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s is not valid UTF-8: %q", name, s)
	}
	if strings.TrimSpace(s) != s || strings.Contains(s, "  ") || strings.Contains(s, "\n\n") ||
		strings.Contains(s, " \n") || strings.Contains(s, "\n ") {
		t.Errorf("%s is not white-space normalized: %q", name, s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool {
		return r != '\n' && r != ' ' && (unicode.IsSpace(r) || unicode.IsControl(r)) || r == '\u00ad' || r == '\ufeff'
	}); i >= 0 {
		t.Errorf("%s keeps %q at byte %d: %q", name, s[i:i+1], i, s)
	}
}
