package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/neardup/neardup"
	"github.com/neardup/neardup/internal/evaldata"
	"github.com/neardup/neardup/internal/procstat"
	"github.com/neardup/neardup/server"
	"github.com/neardup/neardup/store/pebblestore"
)

// BenchmarkServeHTML posts the PostgreSQL manual pages of the evaluation data as HTML
// to a server over a Pebble store, as 'neardup bench service --html' does over HTTP:
// each request a new id and URL, so that every page is decoded, extracted,
// fingerprinted and added; 16 requests at a time. It drives the handler directly, so
// that a profile of it holds the service's costs and none of the load generator's or
// the network's. It reports the process's CPU time a page besides the wall time, the
// figure to compare on a machine shared with other work. The sub-benchmarks are the
// default detector, which verifies near candidates by the records' sketches, and one
// with Options.NoVerify, side by side.
func BenchmarkServeHTML(b *testing.B) {
	b.Run("verify", func(b *testing.B) { benchServeHTML(b, neardup.Options{}) })
	b.Run("no-verify", func(b *testing.B) { benchServeHTML(b, neardup.Options{NoVerify: true}) })
}

func benchServeHTML(b *testing.B, opt neardup.Options) {
	root, err := evaldata.Root()
	evaldata.Need(b, err)
	pages, _, err := evaldata.DebianPages(root)
	evaldata.Need(b, err)
	var fields [][]byte
	var size int64
	for _, p := range pages {
		if !strings.HasPrefix(p.ID, "postgresql-") {
			continue
		}
		var f []byte
		if utf8.Valid(p.HTML) {
			// As the Go client encodes it: "<", ">" and "&" not escaped.
			var q bytes.Buffer
			enc := json.NewEncoder(&q)
			enc.SetEscapeHTML(false)
			enc.Encode(string(p.HTML))
			f = append([]byte(`"html":`), bytes.TrimSuffix(q.Bytes(), []byte("\n"))...)
		} else {
			f = append([]byte(`"html_base64":"`), base64.StdEncoding.EncodeToString(p.HTML)...)
			f = append(f, '"')
		}
		fields = append(fields, f)
		size += int64(len(p.HTML))
	}
	if len(fields) == 0 {
		b.Fatal("no PostgreSQL page in the evaluation data")
	}
	db, err := pebblestore.Open(filepath.Join(b.TempDir(), "data"), pebblestore.Options{MinFree: -1, Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	det, err := neardup.OpenDetector(db, opt)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := server.New(server.Config{Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	srv.SetDetector(det)
	// Bodies are encoded before the timer starts, as bench service's pool does.
	bodies := make([]string, 2*len(fields))
	for i := range bodies {
		n := strconv.Itoa(i)
		bodies[i] = `{"id":"doc-` + n + `","url":"https://bench.example/p/` + n + `",` + string(fields[i%len(fields)]) + `}`
	}
	var next atomic.Int64
	b.SetBytes(size / int64(len(fields)))
	b.ReportAllocs()
	b.SetParallelism(max(1, 16/runtime.GOMAXPROCS(0))) // 16 clients, as the figures quoted
	cpu0 := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			body := bodies[i%int64(len(bodies))]
			if i >= int64(len(bodies)) {
				n := strconv.FormatInt(i, 10)
				body = `{"id":"doc-` + n + `","url":"https://bench.example/p/` + n + `",` + string(fields[i%int64(len(fields))]) + `}`
			}
			r := httptest.NewRequest(http.MethodPost, "/v1/documents", strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Errorf("status %d: %s", w.Code, w.Body)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
	b.ReportMetric(float64(cpuTime(b)-cpu0)/float64(b.N), "cpu-ns/page")
}

// cpuTime returns the user and system CPU time of the process so far, in nanoseconds.
func cpuTime(b *testing.B) int64 {
	user, sys, ok := procstat.CPUTime()
	if !ok {
		b.Skip("no CPU time from this system")
	}
	return int64(user + sys)
}
