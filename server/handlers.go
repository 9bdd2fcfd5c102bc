package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/measure"
	"github.com/neardup/neardup/minhash"
	"github.com/neardup/neardup/simhash"
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

// hashesJSON are a stored document's exact hashes.
type hashesJSON struct {
	Raw  neardup.Hash `json:"raw"`
	Text neardup.Hash `json:"text"`
	Main neardup.Hash `json:"main"`
}

// storedJSON is the answer of GET /v1/documents/{id}.
type storedJSON struct {
	ID        string          `json:"id"`
	URL       string          `json:"url,omitempty"`
	RawURL    string          `json:"raw_url,omitempty"`
	Priority  float64         `json:"priority"`
	FetchTime time.Time       `json:"fetch_time"`
	LastSeen  time.Time       `json:"last_seen"`
	Title     string          `json:"title,omitempty"`
	Words     int             `json:"words"`
	Method    string          `json:"method,omitempty"`
	SimHash   string          `json:"simhash"`
	MinHash   string          `json:"minhash"`
	Hashes    hashesJSON      `json:"hashes"`
	Near      []neardup.Match `json:"near"`
}

// lookup returns a stored document with its near-duplicates, or 404 not_found.
func (s *Server) lookup(ctx context.Context, d *neardup.Detector, id string) (*storedJSON, error) {
	var out *storedJSON
	err := s.do(ctx, func(context.Context) error {
		st, ok, err := d.Get(id)
		if err != nil {
			return err
		}
		if !ok {
			return errorf(http.StatusNotFound, "not_found", "no document %s in the index", strconv.Quote(id))
		}
		out = &storedJSON{
			ID: st.ID, URL: st.URL, RawURL: st.RawURL, Priority: st.Priority, FetchTime: st.FetchTime, LastSeen: st.LastSeen,
			Title: st.Title, Words: st.Words, Method: st.Method,
			SimHash: formatSimHash(st.SimHash), MinHash: formatMinHash(st.MinHash),
			Hashes: hashesJSON{st.Raw, st.Text, st.Main},
			Near:   []neardup.Match{},
		}
		opt := d.Options()
		if st.Words < opt.MinWords {
			return nil // never compared for near-duplicates
		}
		q := neardup.Query{SimHash: st.SimHash, HasSimHash: !opt.NoSimHash}
		if len(st.MinHash) == opt.MinHashK {
			q.MinHash = st.MinHash
		}
		if !q.HasSimHash && len(q.MinHash) == 0 {
			return nil
		}
		near, err := d.Near(q)
		if err != nil {
			return err
		}
		for _, m := range near {
			if m.ID != st.ID {
				out.Near = append(out.Near, m)
			}
		}
		return nil
	})
	return out, err
}

// pathID returns the {id} of the request's path, or 400 invalid_document when it is not
// UTF-8 text: no document can have such an id.
func pathID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if !utf8.ValidString(id) {
		return "", errorf(http.StatusBadRequest, "invalid_document", "the id %q is not UTF-8 text: percent-encode the id's UTF-8 bytes", id)
	}
	return id, nil
}

func (s *Server) getDocument(w http.ResponseWriter, r *http.Request) error {
	d, err := s.detector()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	out, err := s.lookup(r.Context(), d, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) deleteDocument(w http.ResponseWriter, r *http.Request) error {
	d, err := s.detector()
	if err != nil {
		return err
	}
	id, err := pathID(r)
	if err != nil {
		return err
	}
	var ok bool
	if err := s.do(r.Context(), func(context.Context) error {
		var err error
		ok, err = d.Remove(id)
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return errorf(http.StatusNotFound, "not_found", "no document %s in the index", strconv.Quote(id))
	}
	writeJSON(w, http.StatusOK, map[string]any{"id": id, "deleted": true})
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

// levelsJSON says at which exact levels two documents are equal.
type levelsJSON struct {
	Raw  bool `json:"raw"`
	Text bool `json:"text"`
	Main bool `json:"main"`
}

// sideJSON describes one document of a comparison as the detector sees it.
type sideJSON struct {
	Title   string `json:"title,omitempty"`
	Method  string `json:"method,omitempty"`
	Words   int    `json:"words"`
	SimHash string `json:"simhash"`
}

// comparison is the answer of POST /v1/compare.
type comparison struct {
	// Levels, Distance, Similarity and Near are the detector's view: its fingerprints
	// and its near rule.
	Levels     levelsJSON `json:"levels"`
	Distance   int        `json:"simhash_distance"`
	Similarity float64    `json:"minhash_similarity"`
	Near       bool       `json:"near"`
	A          sideJSON   `json:"a"`
	B          sideJSON   `json:"b"`
	// Measures are every measure of the two main texts, as `neardup compare` gives them.
	Measures *measure.Result `json:"measures"`
	// Diff is the word diff of the two main texts.
	Diff measure.Diff `json:"diff"`
}

// compareDocs compares two documents by the detector's fingerprints and by every measure
// of their main texts.
func compareDocs(d *neardup.Detector, cj compareJSON) (*comparison, error) {
	opt := d.Options()
	var c comparison
	var fps [2]neardup.Fingerprints
	var mains [2]string
	for i, text := range []string{cj.A, cj.B} {
		doc := neardup.Document{ID: string(rune('a' + i)), Text: text}
		mains[i] = text
		if cj.HTML {
			doc.Text, doc.HTML = "", []byte(text)
			var err error
			if mains[i], err = d.Fingerprinter().MainText(doc); err != nil {
				return nil, errorf(http.StatusBadRequest, "invalid_document", "%v", err)
			}
		}
		fp, err := d.Fingerprinter().Fingerprint(doc)
		if err != nil {
			return nil, err
		}
		fps[i] = fp
	}
	a, b := &fps[0], &fps[1]
	c.Levels = levelsJSON{a.Raw == b.Raw, a.Text == b.Text, a.Main == b.Main}
	c.Distance = simhash.Distance(a.SimHash, b.SimHash)
	if len(a.MinHash) == len(b.MinHash) && len(a.MinHash) > 0 {
		c.Similarity = minhash.Similarity(a.MinHash, b.MinHash)
	}
	enough := a.Words >= opt.MinWords && b.Words >= opt.MinWords
	bySim, byMin := c.Distance <= opt.Distance, c.Similarity >= opt.Threshold
	switch opt.Near {
	case neardup.NearSimHash:
		c.Near = bySim
	case neardup.NearMinHash:
		c.Near = byMin
	case neardup.NearBoth:
		c.Near = bySim && byMin
	default:
		c.Near = bySim || byMin
	}
	c.Near = c.Near && enough
	c.A = sideJSON{a.Title, a.Method, a.Words, formatSimHash(a.SimHash)}
	c.B = sideJSON{b.Title, b.Method, b.Words, formatSimHash(b.SimHash)}
	res, err := measure.Compare(measure.Text{Name: "a", Text: mains[0]}, measure.Text{Name: "b", Text: mains[1]},
		measure.Options{Unit: opt.Shingle.Unit, K: opt.Shingle.K, Normalize: opt.Shingle, MinHashK: opt.MinHashK})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", neardup.ErrOptions, err)
	}
	c.Measures = res
	c.Diff = measure.WordDiff(mains[0], mains[1])
	return &c, nil
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) error {
	d, cj, err := decodeRequest(s, w, r, decodeCompare)
	if err != nil {
		return err
	}
	var c *comparison
	if err := s.do(r.Context(), func(context.Context) error {
		var err error
		c, err = compareDocs(d, cj)
		return err
	}); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// statsJSON is the answer of GET /v1/stats.
type statsJSON struct {
	Documents     int              `json:"documents"`
	UptimeSeconds float64          `json:"uptime_seconds"`
	Verdicts      map[string]int64 `json:"verdicts"`
	Options       optionsJSON      `json:"options"`
	Store         storeJSON        `json:"store"`
	BandCopy      bandCopyJSON     `json:"band_copy"`
}

// bandCopyJSON describes the detector's in-memory copy of its band postings, and where
// the postings are kept.
type bandCopyJSON struct {
	Active   bool   `json:"active"`
	Bytes    int64  `json:"bytes"`
	Postings string `json:"postings"`
}

type optionsJSON struct {
	Near          string  `json:"near"`
	Distance      int     `json:"distance"`
	Threshold     float64 `json:"threshold"`
	MinHashK      int     `json:"minhash_k"`
	MaxAgeSeconds float64 `json:"max_age"`
	Keep          string  `json:"keep"`
	NoExtract     bool    `json:"no_extract"`
	MinWords      int     `json:"min_words"`
	MaxMatches    int     `json:"max_matches"`
}

type storeJSON struct {
	Path string `json:"path"`
	Kind string `json:"kind"`
}

func (s *Server) statsOf(d *neardup.Detector) statsJSON {
	opt := d.Options()
	st := statsJSON{
		Documents:     d.Len(),
		UptimeSeconds: time.Since(s.started).Seconds(),
		Verdicts:      map[string]int64{},
		Options: optionsJSON{
			Near: opt.Near.String(), Distance: opt.Distance, Threshold: opt.Threshold, MinHashK: opt.MinHashK,
			MaxAgeSeconds: opt.MaxAge.Seconds(), Keep: opt.Keep.String(), NoExtract: opt.NoExtract,
			MinWords: opt.MinWords, MaxMatches: opt.MaxMatches,
		},
		Store: storeJSON{s.cfg.StorePath, s.cfg.StoreKind},
	}
	st.BandCopy.Active, st.BandCopy.Bytes = d.BandCopy()
	st.BandCopy.Postings = d.BandPostings()
	for k := range s.counts {
		st.Verdicts[neardup.Kind(k).String()] = s.counts[k].Load()
	}
	return st
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	d, err := s.detector()
	if err != nil {
		return err
	}
	var st statsJSON
	if err := s.do(r.Context(), func(context.Context) error { st = s.statsOf(d); return nil }); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

// prescreen answers the key filter's snapshot. Its ETag is the xxhash of the snapshot,
// so it changes whenever the filter does; each request costs a copy and a hash of the
// filter (1.2 MB at the defaults).
func (s *Server) prescreen(w http.ResponseWriter, r *http.Request) error {
	d, err := s.detector()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := s.do(r.Context(), func(context.Context) error {
		_, err := d.Prescreen().WriteTo(&buf)
		return err
	}); err != nil {
		return err
	}
	etag := fmt.Sprintf(`"%016x"`, xxhash.Sum64(buf.Bytes()))
	w.Header().Set("ETag", etag)
	w.Header().Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return nil
}

// etagMatch reports whether an If-None-Match header names etag (or is "*").
func etagMatch(header, etag string) bool {
	for _, t := range bytes.Split([]byte(header), []byte(",")) {
		t = bytes.TrimSpace(t)
		t = bytes.TrimPrefix(t, []byte("W/"))
		if string(t) == etag || string(t) == "*" {
			return true
		}
	}
	return false
}

// backupRequest is the body of POST /v1/admin/backup.
type backupRequest struct {
	Dir string `json:"dir"`
}

// backup answers POST /v1/admin/backup: a consistent copy of the store in the directory
// the body names, an absolute path on the server's machine that must not exist yet.
// Writes go on meanwhile; the copy holds every document acknowledged before the request.
func (s *Server) backup(w http.ResponseWriter, r *http.Request) error {
	if s.cfg.Backup == nil {
		return errorf(http.StatusNotImplemented, "not_implemented", "this server's store has no backup; copy its directory while it is stopped")
	}
	if _, err := s.detector(); err != nil {
		return err
	}
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return err
	}
	var req backupRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "bad_request", "the body must be {\"dir\": \"/absolute/path\"}: %v", err)
	}
	if !filepath.IsAbs(req.Dir) {
		return errorf(http.StatusBadRequest, "bad_request", "dir %q: give an absolute path on the server's machine, which must not exist yet", req.Dir)
	}
	// A copy across file systems may take longer than the answer's write timeout.
	http.NewResponseController(w).SetWriteDeadline(time.Time{})
	start := time.Now()
	if err := s.cfg.Backup(req.Dir); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errorf(http.StatusConflict, "exists", "%s exists: name a directory that does not, so no backup is overwritten", req.Dir)
		}
		return err
	}
	s.cfg.Logger.Info("backup written", "dir", req.Dir, "seconds", time.Since(start).Seconds())
	writeJSON(w, http.StatusOK, map[string]any{"dir": req.Dir, "seconds": time.Since(start).Seconds()})
	return nil
}
