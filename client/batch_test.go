package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/neardup/neardup"
)

// corpus returns n documents with exact and near copies among them and, at the given
// positions, one without an id (the service refuses it) and one with Latin-1 text (the
// client refuses it: only HTML travels in any charset).
func corpus(n int, noID, latin1 int) []neardup.Document {
	docs := make([]neardup.Document, n)
	for i := range docs {
		docs[i] = article(fmt.Sprint("d", i), fmt.Sprintf("http://example.com/%d", i%(n/2)), i%(n/3))
	}
	docs[noID].ID = ""
	docs[latin1] = neardup.Document{ID: "latin1", Text: "caf\xe9"}
	return docs
}

// want returns the verdicts a local detector gives the documents one by one, in order.
func want(t *testing.T, docs []neardup.Document, add bool) []Result {
	d, _ := neardup.NewDetector(neardup.Options{})
	out := make([]Result, len(docs))
	for i, doc := range docs {
		var err error
		if add {
			out[i].Verdict, err = d.Check(doc)
		} else {
			out[i].Verdict, err = d.Peek(doc)
		}
		if err != nil {
			out[i].Err = err
		}
	}
	return out
}

func checkResults(t *testing.T, got, want []Result, noID, latin1 int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d results for %d documents", len(got), len(want))
	}
	for i := range got {
		switch i {
		case noID:
			var api *APIError
			if !errors.As(got[i].Err, &api) || api.Code != "invalid_document" || api.Status != 0 {
				t.Errorf("document without id: %v", got[i].Err)
			}
		case latin1:
			if !errors.Is(got[i].Err, ErrNotUTF8) {
				t.Errorf("Latin-1 document: %v", got[i].Err)
			}
		default:
			if got[i].Err != nil || !reflect.DeepEqual(got[i].Verdict, want[i].Verdict) {
				t.Fatalf("result %d: %+v, want %+v", i, got[i], want[i])
			}
		}
	}
}

func TestAddBatch(t *testing.T) {
	const n, noID, latin1 = 250, 17, 120
	docs := corpus(n, noID, latin1)
	f := newFake(t, neardup.Options{})
	c := newClient(t, f, Options{BatchSize: 100})
	got, err := c.AddBatch(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, got, want(t, docs, true), noID, latin1)
	// 249 documents sent (the Latin-1 one is not): 100, 100, 49.
	if f.batches.Load() != 3 {
		t.Errorf("%d requests, want 3", f.batches.Load())
	}
	if _, ok := f.sizes.Load(49); !ok {
		t.Error("no request of the last 49 documents")
	}
}

func TestCheckBatchConcurrent(t *testing.T) {
	const n, noID, latin1 = 500, 0, 499
	docs := corpus(n, noID, latin1)
	f := newFake(t, neardup.Options{})
	stored := docs[100:200] // check against documents stored before
	for _, doc := range stored {
		f.d.Check(doc)
	}
	c := newClient(t, f, Options{BatchSize: 7, Concurrency: 8})
	got, err := c.CheckBatch(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	// Peeks do not change the detector: the expected verdicts are against stored alone.
	d, _ := neardup.NewDetector(neardup.Options{})
	for _, doc := range stored {
		d.Check(doc)
	}
	exp := make([]Result, n)
	for i, doc := range docs {
		exp[i].Verdict, _ = d.Peek(doc)
	}
	checkResults(t, got, exp, noID, latin1)
	if f.d.Len() != 100 {
		t.Errorf("CheckBatch stored documents: %d", f.d.Len())
	}
}

// TestBatchTooMany: a service whose maximum is below BatchSize answers 413, and the
// client halves its requests until they fit.
func TestBatchTooMany(t *testing.T) {
	const n, noID, latin1 = 120, 3, 4
	docs := corpus(n, noID, latin1)
	f := newFake(t, neardup.Options{})
	f.maxBatch = 30
	got, err := newClient(t, f, Options{BatchSize: 100}).AddBatch(context.Background(), docs)
	if err != nil {
		t.Fatal(err)
	}
	checkResults(t, got, want(t, docs, true), noID, latin1)
	f.sizes.Range(func(k, v any) bool {
		if k.(int) > 30 {
			t.Errorf("a request of %d documents was answered", k)
		}
		return true
	})
}

// TestBatchRequestFails: a request that fails as a whole fails its documents and only
// them, and is the call's error.
func TestBatchRequestFails(t *testing.T) {
	const n, noID, latin1 = 100, 0, 1
	docs := corpus(n, noID, latin1)
	f := newFake(t, neardup.Options{})
	var calls atomic.Int64
	f.setFail(func(w http.ResponseWriter, r *http.Request) bool {
		if calls.Add(1) != 2 { // the second request of four
			return false
		}
		writeError(w, 403, "forbidden", "token lacks the write scope")
		return true
	})
	got, err := newClient(t, f, Options{BatchSize: 33}).AddBatch(context.Background(), docs)
	var api *APIError
	if !errors.As(err, &api) || api.Code != "forbidden" {
		t.Fatalf("error %v", err)
	}
	// Sent: docs[0] and docs[2:] in requests of 33; the second carries docs[34:67].
	d, _ := neardup.NewDetector(neardup.Options{})
	for i, r := range got {
		failed := errors.As(r.Err, &api) && api.Code == "forbidden"
		if (i >= 34 && i < 67) != failed {
			t.Errorf("result %d: %v", i, r.Err)
		}
		if !failed && i != latin1 {
			d.Check(docs[i])
		}
	}
	if f.d.Len() != d.Len() {
		t.Errorf("%d documents stored, want %d", f.d.Len(), d.Len())
	}
}

func TestBatchEmpty(t *testing.T) {
	f := newFake(t, neardup.Options{})
	got, err := newClient(t, f, Options{}).AddBatch(context.Background(), nil)
	if err != nil || len(got) != 0 || f.requests.Load() != 0 {
		t.Errorf("empty batch: %v %v, %d requests", got, err, f.requests.Load())
	}
}
