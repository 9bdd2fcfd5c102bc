package server

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are one server's Prometheus metrics, in a registry of their own.
type metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec   // by route pattern and status code
	latency  *prometheus.HistogramVec // by route pattern
	verdicts *prometheus.CounterVec   // by kind
	inFlight prometheus.Gauge
	rejected prometheus.Counter
	// refusedConns counts connections answered 503 and closed past MaxConns and the
	// health checks' reserve.
	refusedConns prometheus.Counter
	openConns    prometheus.Gauge // connections counted against MaxConns and the reserve
	handler      http.Handler
}

func newMetrics(documents func() float64) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_http_requests_total",
			Help: "HTTP requests by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "neardup_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "neardup_verdicts_total",
			Help: "Verdicts given (check-and-add and check-only), by kind.",
		}, []string{"kind"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "neardup_http_in_flight_requests",
			Help: "HTTP requests being answered.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_http_rejected_total",
			Help: "Requests refused with 429 overloaded because --max-inflight requests were at work or --body-memory was held by other bodies.",
		}),
		refusedConns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "neardup_http_refused_connections_total",
			Help: "Connections answered 503 and closed because --max-conns connections and the health checks' reserve were open.",
		}),
		openConns: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "neardup_http_open_connections",
			Help: "Connections open, counted against --max-conns and past it the health checks' reserve.",
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.verdicts, m.inFlight, m.rejected, m.refusedConns, m.openConns,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "neardup_index_documents",
			Help: "Documents in the index (0 until it is loaded).",
		}, documents),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
	return m
}
