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

	"github.com/cespare/xxhash/v2"
	"github.com/neardup/neardup"
)

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

// screenBody is a pre-screen answer: a detector's key filter, encoded, of the
// generation gen (neardup.Detector.PrescreenGen), and its ETag.
type screenBody struct {
	det  *neardup.Detector
	gen  uint64
	body []byte
	etag string
}

// prescreen answers the key filter's snapshot. Its ETag is the xxhash of the snapshot,
// so it changes whenever the filter does. The encoding and its hash are kept until the
// detector's filter changes (PrescreenGen): on a shared store, where it changes at each
// refill and each add of this replica, a request most often costs neither a copy nor
// a hash of the filter (1.2 MB at the defaults); on a store the detector alone writes,
// every add changes it.
func (s *Server) prescreen(w http.ResponseWriter, r *http.Request) error {
	d, err := s.detector()
	if err != nil {
		return err
	}
	sb := s.screen.Load()
	if gen := d.PrescreenGen(); sb == nil || sb.det != d || sb.gen != gen {
		// gen is read before the filter, so the filter is of gen or later: a body is
		// never older than its generation says.
		var buf bytes.Buffer
		if err := s.do(r.Context(), func(context.Context) error {
			_, err := d.Prescreen().WriteTo(&buf)
			return err
		}); err != nil {
			return err
		}
		sb = &screenBody{det: d, gen: gen, body: buf.Bytes(), etag: fmt.Sprintf(`"%016x"`, xxhash.Sum64(buf.Bytes()))}
		s.screen.Store(sb)
	}
	w.Header().Set("ETag", sb.etag)
	w.Header().Set("Cache-Control", "no-cache")
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatch(inm, sb.etag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(sb.body)))
	w.WriteHeader(http.StatusOK)
	w.Write(sb.body)
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
