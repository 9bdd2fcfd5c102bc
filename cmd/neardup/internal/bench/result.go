package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// LatencySummary is the latency of one kind of request, in milliseconds.
type LatencySummary struct {
	Requests int64   `json:"requests"` // 2xx responses measured
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p99_9_ms"`
	Max      float64 `json:"max_ms"`
	Mean     float64 `json:"mean_ms"`
}

// ServiceResult is the JSON report of a measuring run of bench service.
type ServiceResult struct {
	Mode       string   `json:"mode"`
	Addr       string   `json:"addr"`
	Clients    int      `json:"clients"`
	Rate       float64  `json:"rate"` // requests/s scheduled; 0: closed loop
	Batch      int      `json:"batch"`
	Size       int      `json:"size"`
	Seed       uint64   `json:"seed"`
	HTML       []string `json:"html,omitempty"` // --html: the documents are these inputs' pages
	DupRate    float64  `json:"dup_rate"`
	URLDupRate float64  `json:"url_dup_rate"`
	Start      int      `json:"start"`
	FirstDoc   int      `json:"first_doc"`  // the first document of the measured phase
	NextStart  int      `json:"next_start"` // the first document no request carried

	WarmupSeconds     float64                   `json:"warmup_seconds"`
	Seconds           float64                   `json:"seconds"` // the measured phase
	Requests          int64                     `json:"requests"`
	Docs              int64                     `json:"docs"` // documents in 2xx add and check responses
	Errors            int64                     `json:"errors"`
	Status            map[string]int64          `json:"status"` // responses by HTTP status
	TransportErrors   int64                     `json:"transport_errors"`
	RequestsPerSecond float64                   `json:"requests_per_second"`
	DocsPerSecond     float64                   `json:"docs_per_second"`
	QueriesPerSecond  float64                   `json:"queries_per_second"`
	Latency           map[string]LatencySummary `json:"latency"` // by kind: add, check, query
	Verdicts          map[string]int64          `json:"verdicts"`
	Added             int64                     `json:"added"`
	ItemErrors        map[string]int64          `json:"item_errors"` // batch results with an error, by code
	Queries           int64                     `json:"queries"`     // queries in 2xx query responses
	QueriesMatched    int64                     `json:"queries_matched"`
	Matches           int64                     `json:"matches"`
	Prepared          int                       `json:"prepared"`       // bodies encoded before the timed phase
	EncodedInRun      int64                     `json:"encoded_in_run"` // documents encoded during it
	CPUUserSeconds    float64                   `json:"cpu_user_seconds"`
	CPUSysSeconds     float64                   `json:"cpu_sys_seconds"`
	Interrupted       bool                      `json:"interrupted"`
	// With --batcher, Requests are the queries asked, one a call, and HTTPRequests the
	// batch requests that carried them, at most InFlight at a time.
	InFlight     int   `json:"in_flight,omitempty"`
	HTTPRequests int64 `json:"http_requests,omitempty"`
}

// result returns the measured fields of a run's report, elapsed its measured time.
func (s *loadStats) result(elapsed time.Duration) ServiceResult {
	res := ServiceResult{
		Seconds: elapsed.Seconds(),
		Errors:  s.errors(), Status: map[string]int64{}, TransportErrors: s.transport,
		Latency: map[string]LatencySummary{}, Verdicts: s.verdicts, Added: s.added, ItemErrors: s.itemErrors,
		QueriesMatched: s.matched, Matches: s.matches,
	}
	for code, n := range s.status {
		res.Status[strconv.Itoa(code)] = n
	}
	for op := range numOps {
		res.Requests += s.requests[op]
		h := &s.latency[op]
		if s.requests[op] == 0 {
			continue
		}
		ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
		res.Latency[opNames[op]] = LatencySummary{Requests: int64(h.n),
			P50: ms(h.quantile(0.5)), P90: ms(h.quantile(0.9)), P99: ms(h.quantile(0.99)),
			P999: ms(h.quantile(0.999)), Max: ms(h.max), Mean: ms(h.mean())}
	}
	res.Docs = s.items[OpAdd] + s.items[OpCheck]
	res.Queries = s.items[OpQuery]
	if secs := elapsed.Seconds(); secs > 0 {
		res.RequestsPerSecond = float64(res.Requests) / secs
		res.DocsPerSecond = float64(res.Docs) / secs
		res.QueriesPerSecond = float64(res.Queries) / secs
	}
	return res
}

// sortedCounts formats counts as "k1 n1, k2 n2" in key order, or none.
func sortedCounts[V int64 | int](m map[string]V, sep string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s%s%d", k, sep, m[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// WriteServiceReport writes the human-readable report of a measuring run to w, as a
// table; cpuOK says whether the CPU times in r were measured.
func WriteServiceReport(w io.Writer, r ServiceResult, cpuOK bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	loop := "closed loop"
	if r.Rate > 0 {
		loop = fmt.Sprintf("open loop at %g requests/s", r.Rate)
	}
	batch := fmt.Sprintf("batch %d", r.Batch)
	if r.InFlight > 0 {
		batch = fmt.Sprintf("one query a call through the client's Batcher, %d requests in flight", r.InFlight)
	}
	fmt.Fprintf(tw, "bench service\t%s at %s, %d clients, %s, %s\n", r.Mode, r.Addr, r.Clients, loop, batch)
	if r.Interrupted {
		fmt.Fprintf(tw, "interrupted\tthe figures cover the run until the interrupt\n")
	}
	if len(r.HTML) > 0 {
		fmt.Fprintf(tw, "documents\tdoc-%d to doc-%d measured (the HTML pages of %s in turn); next --start %d\n",
			r.FirstDoc, r.NextStart-1, strings.Join(r.HTML, ", "), r.NextStart)
	} else if r.Mode != "query" {
		fmt.Fprintf(tw, "documents\tdoc-%d to doc-%d measured (%d bytes of text, %g near copies, %g of them at their original's URL, seed %d); next --start %d\n",
			r.FirstDoc, r.NextStart-1, r.Size, r.DupRate, r.URLDupRate, r.Seed, r.NextStart)
	}
	fmt.Fprintf(tw, "requests\t%d in %.2f s after %.1f s of warmup: %.1f requests/s", r.Requests, r.Seconds, r.WarmupSeconds, r.RequestsPerSecond)
	if r.Docs > 0 {
		fmt.Fprintf(tw, ", %.1f documents/s", r.DocsPerSecond)
	}
	if r.Queries > 0 {
		fmt.Fprintf(tw, ", %.1f queries/s", r.QueriesPerSecond)
	}
	fmt.Fprintln(tw)
	if r.InFlight > 0 {
		fmt.Fprintf(tw, "batches\tthe %d queries went in %d HTTP requests (%.1f queries each)\n",
			r.Requests, r.HTTPRequests, float64(r.Requests)/max(float64(r.HTTPRequests), 1))
	}
	fmt.Fprintf(tw, "status\t%s\n", sortedCounts(r.Status, ": "))
	errs := fmt.Sprintf("%d", r.Errors)
	if r.TransportErrors > 0 {
		errs += fmt.Sprintf(" (%d without a response)", r.TransportErrors)
	}
	if len(r.ItemErrors) > 0 {
		errs += "; batch items: " + sortedCounts(r.ItemErrors, " ")
	}
	fmt.Fprintf(tw, "errors\t%s\n", errs)
	for _, op := range opNames {
		l, ok := r.Latency[op]
		if !ok {
			continue
		}
		fmt.Fprintf(tw, "latency %s\tp50 %.3f ms, p90 %.3f, p99 %.3f, p99.9 %.3f, max %.3f (mean %.3f, %d responses)\n",
			op, l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean, l.Requests)
	}
	if r.Mode != "query" {
		fmt.Fprintf(tw, "verdicts\t%s; added %d\n", sortedCounts(r.Verdicts, " "), r.Added)
	}
	if r.Queries > 0 {
		fmt.Fprintf(tw, "queries\t%d answered, %d with matches, %d matches\n", r.Queries, r.QueriesMatched, r.Matches)
	}
	cpu := "CPU time unknown on this system"
	if cpuOK {
		t := r.CPUUserSeconds + r.CPUSysSeconds
		cpu = fmt.Sprintf("%.2f s CPU (user %.2f, sys %.2f), %.2f cores", t, r.CPUUserSeconds, r.CPUSysSeconds, t/max(r.Seconds, 1e-9))
	}
	fmt.Fprintf(tw, "generator\t%s; %d bodies encoded before, %d documents during the run\n", cpu, r.Prepared, r.EncodedInRun)
	if r.EncodedInRun > 0 {
		fmt.Fprintf(tw, "note\tthe pool ran out: the documents encoded during the run took CPU from the\n\tservice on a shared machine; --pool %d would have held them all\n", r.NextStart-r.Start)
	}
	return tw.Flush()
}
