package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/store"
)

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	switch {
	case s.stop.Load():
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "stopping"})
	case s.det.Load() == nil:
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "loading"})
	case s.cfg.Health != nil:
		if err := s.cfg.Health(); err != nil {
			status := "store_failed"
			if errors.Is(err, store.ErrNoSpace) {
				status = "no_space"
			}
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": status, "reason": err.Error()})
			return nil
		}
		fallthrough
	default:
		writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	}
	return nil
}

// count adds a verdict to the counts of /v1/stats and /metrics.
func (s *Server) count(v neardup.Verdict) {
	if int(v.Kind) >= 0 && int(v.Kind) < len(s.counts) {
		s.counts[v.Kind].Add(1)
	}
	s.met.verdicts.WithLabelValues(v.Kind.String()).Inc()
}

// decodeRequest returns the detector and the request's body decoded by decode, or the
// error to answer (503 before the detector is ready, 413 over MaxBody, 400 for a body
// decode refuses).
func decodeRequest[T any](s *Server, w http.ResponseWriter, r *http.Request, decode func([]byte) (T, error)) (*neardup.Detector, T, error) {
	var zero T
	d, body, err := s.request(w, r)
	if err != nil {
		return nil, zero, err
	}
	v, err := decode(body)
	if err != nil {
		return nil, zero, err
	}
	return d, v, nil
}

// request returns the detector and the request's body, or the error to answer (503
// before the detector is ready, 413 over MaxBody).
func (s *Server) request(w http.ResponseWriter, r *http.Request) (*neardup.Detector, []byte, error) {
	d, err := s.detector()
	if err != nil {
		return nil, nil, err
	}
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return nil, nil, err
	}
	return d, body, nil
}

// checkOne answers POST /v1/documents (add) and /v1/check.
func (s *Server) checkOne(w http.ResponseWriter, r *http.Request, add bool) error {
	d, doc, err := decodeRequest(s, w, r, decodeDocument)
	if err != nil {
		return err
	}
	var v neardup.Verdict
	err = s.do(r.Context(), func(context.Context) error {
		var err error
		if add {
			v, err = d.Check(doc)
		} else {
			v, err = d.Peek(doc)
		}
		return err
	})
	if err != nil {
		return err
	}
	s.count(v)
	writeJSON(w, http.StatusOK, v)
	return nil
}

func (s *Server) postDocument(w http.ResponseWriter, r *http.Request) error {
	return s.checkOne(w, r, true)
}

func (s *Server) check(w http.ResponseWriter, r *http.Request) error {
	return s.checkOne(w, r, false)
}

// batchResult is one result of a batch: a verdict or an error.
type batchResult struct {
	Verdict *neardup.Verdict `json:"verdict,omitempty"`
	Error   *errorDetail     `json:"error,omitempty"`
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request) error {
	d, body, err := s.request(w, r)
	if err != nil {
		return err
	}
	docs, errs, add, err := decodeBatch(body, s.cfg.MaxBatch)
	if err != nil {
		return err
	}
	results := make([]batchResult, len(docs))
	err = s.do(r.Context(), func(ctx context.Context) error {
		// In order: each document is checked against those before it.
		for i, doc := range docs {
			if err := ctx.Err(); err != nil {
				return errTimeout
			}
			if errs[i] == nil {
				var v neardup.Verdict
				if add {
					v, errs[i] = d.Check(doc)
				} else {
					v, errs[i] = d.Peek(doc)
				}
				if errs[i] == nil {
					results[i].Verdict = &v
					continue
				}
				if !errors.Is(errs[i], neardup.ErrDocument) {
					return errs[i] // the store failed: the rest would too
				}
			}
			ae := clientError(errs[i])
			results[i].Error = &errorDetail{ae.code, ae.message}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, res := range results {
		if res.Verdict != nil {
			s.count(*res.Verdict)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
	return nil
}

// near returns d.Near(q), with an empty list rather than nil for no match, so that the
// answer says "matches":[].
func near(d *neardup.Detector, q neardup.Query) ([]neardup.Match, error) {
	m, err := d.Near(q)
	if m == nil {
		m = []neardup.Match{}
	}
	return m, err
}

func (s *Server) query(w http.ResponseWriter, r *http.Request) error {
	d, q, err := decodeRequest(s, w, r, decodeQuery)
	if err != nil {
		return err
	}
	var matches []neardup.Match
	if err := s.do(r.Context(), func(context.Context) error {
		var err error
		matches, err = near(d, q)
		return err
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"matches": matches})
	return nil
}

// queryResult is one result of a query batch: the matches or an error. Matches is
// never nil without an Error, so that omitzero, which drops only nil, keeps
// "matches":[] for no match.
type queryResult struct {
	Matches []neardup.Match `json:"matches,omitzero"`
	Error   *errorDetail    `json:"error,omitempty"`
}

// queryBatch answers POST /v1/fingerprints/query:batch: every query in one slot of the
// in-flight semaphore, each answered as POST /v1/fingerprints/query would, except that
// a query the single endpoint would answer 400 gets its error in its result. A store
// failure fails the whole request.
func (s *Server) queryBatch(w http.ResponseWriter, r *http.Request) error {
	d, body, err := s.request(w, r)
	if err != nil {
		return err
	}
	qs, errs, err := decodeQueryBatch(body, s.cfg.MaxBatch)
	if err != nil {
		return err
	}
	results := make([]queryResult, len(qs))
	err = s.do(r.Context(), func(ctx context.Context) error {
		for i, q := range qs {
			if err := ctx.Err(); err != nil {
				return errTimeout
			}
			if errs[i] == nil {
				var m []neardup.Match
				if m, errs[i] = near(d, q); errs[i] == nil {
					results[i].Matches = m
					continue
				}
			}
			ae := clientError(errs[i])
			if ae == nil {
				return errs[i] // the store failed: the rest would too
			}
			results[i].Error = &errorDetail{ae.code, ae.message}
		}
		return nil
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
	return nil
}
