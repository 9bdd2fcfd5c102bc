package server

import (
	"context"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/neardup/neardup"
)

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
