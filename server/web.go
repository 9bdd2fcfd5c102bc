package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/neardup/neardup/internal/htmlpage"
	"github.com/neardup/neardup/internal/measure"
	"github.com/neardup/neardup/minhash"
)

// pageData is what the web page shows.
type pageData struct {
	Status    string // "ready", "loading" or "stopping"
	Stats     *statsJSON
	A, B      string
	HTML      bool
	Compared  *comparison
	Measures  [][2]string
	CompError string
	ID        string
	Doc       *storedJSON
	LookError string
}

// page answers GET / and POST /: the web page, rendered on the server, with no script.
// Its forms are the compare form (a, b, html; POST, or GET with the same parameters) and
// the lookup form (id; GET).
func (s *Server) page(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBody)
	if err := r.ParseForm(); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errorf(http.StatusRequestEntityTooLarge, "too_large", "the form is over %d bytes (the server's --max-body)", s.cfg.MaxBody)
		}
		return errorf(http.StatusBadRequest, "bad_request", "the form: %v", err)
	}
	valid := func(k string) string { return strings.ToValidUTF8(r.Form.Get(k), "\uFFFD") }
	data := pageData{Status: "ready", A: valid("a"), B: valid("b"), HTML: r.Form.Get("html") != "", ID: valid("id")}
	d, err := s.detector()
	if err != nil {
		data.Status = "loading"
		if s.stop.Load() {
			data.Status = "stopping"
		}
	} else {
		st := s.statsOf(d)
		data.Stats = &st
		if data.A != "" || data.B != "" {
			err := s.do(r.Context(), func(context.Context) error {
				var err error
				data.Compared, err = compareDocs(d, compareJSON{data.A, data.B, data.HTML})
				return err
			})
			if err != nil {
				data.CompError = messageOf(err)
			} else {
				data.Measures = measureRows(data.Compared)
			}
		}
		if data.ID != "" {
			data.Doc, err = s.lookup(r.Context(), d, data.ID)
			if err != nil {
				data.LookError = messageOf(err)
			}
		}
	}
	var b htmlpage.Builder
	writeWebPage(&b, &data)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
	return nil
}

// messageOf returns what the page says for an error.
func messageOf(err error) string {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.message
	}
	return err.Error()
}

// measureRows lays out a comparison as the page's table of measures.
func measureRows(c *comparison) [][2]string {
	m := c.Measures
	yes := map[bool]string{true: "yes", false: "no"}
	edit := fmt.Sprintf("n/a (longer than %d characters)", minhash.MaxEditRunes)
	if m.EditSimilarity != nil {
		edit = measure.Ratio(*m.EditSimilarity)
	}
	return [][2]string{
		{"raw bytes equal", yes[c.Levels.Raw]},
		{"visible text equal (normalized)", yes[c.Levels.Text]},
		{"main text equal (normalized)", yes[c.Levels.Main]},
		{"SimHash distance (the detector's)", fmt.Sprintf("%d of 64 bits (%s, %s)", c.Distance, c.A.SimHash, c.B.SimHash)},
		{"MinHash estimate (the detector's)", measure.Ratio(c.Similarity)},
		{"near-duplicate by the detector's rule", yes[c.Near]},
		{"words of main text", fmt.Sprintf("%d and %d", c.A.Words, c.B.Words)},
		{"Jaccard", fmt.Sprintf("%s (%d of %d shingles)", measure.Ratio(m.Jaccard), m.Intersection, m.Union)},
		{"containment of A in B", measure.Ratio(m.ContainmentAInB)},
		{"containment of B in A", measure.Ratio(m.ContainmentBInA)},
		{fmt.Sprintf("MinHash estimate (K=%d, seed 0)", m.MinHashK), measure.Ratio(m.MinHash)},
		{"SimHash distance (" + m.SimHashScheme.String() + ")", fmt.Sprintf("%d of 64 bits", m.SimHashDistance)},
		{"cosine (term frequencies)", measure.Ratio(m.CosineTF)},
		{"edit similarity", edit},
	}
}
