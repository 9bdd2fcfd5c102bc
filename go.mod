module github.com/neardup/neardup

go 1.26.8

require (
	// bloom: the key filter (KeyFilter, the client's pre-screen), sized from n and the
	// false-positive rate; murmur3 positions and a documented binary form, widely used.
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/cespare/xxhash/v2 v2.3.0
	// uax29: Unicode word boundaries (UAX #29) for package shingle, conformance-tested
	// against the Unicode test suite, allocation-free, maintained; hand-writing the
	// rules (extend/format chars, Katakana, Hebrew, emoji, regional indicators) is how
	// tokenizers go wrong. shingle's ASCII fast path is checked against it.
	github.com/clipperhouse/uax29/v2 v2.7.0
	// go-readability: test only, the extractor package extract is compared with on the
	// Article Extraction Benchmark (extract/eval_test.go: F1 0.934 against 0.961). It
	// adds no module: go-trafilatura already requires it.
	github.com/go-shiori/go-readability v0.0.0-20251205110129-5db1dc9836f0
	// go-trafilatura: package extract's main-content extractor, a maintained port of
	// trafilatura, the best of the extractors measured on the Article Extraction
	// Benchmark here (F1 0.961; go-readability 0.934), in pure Go. Its own fallback
	// extractors stay off: they cost time and, here, accuracy.
	github.com/markusmobius/go-trafilatura v1.12.2
	// whatwg-url: package urlnorm's parser, the WHATWG URL Standard as browsers apply it
	// (hosts, IPv4/IPv6, ports, base URLs), passing the standard's test data in full;
	// kept by the National Library of Norway for its crawler, with canonicalizer profiles
	// modelled on iipc/urlcanon, which urlnorm is measured against. A hand-written parser
	// accepted most of what the standard rejects. It adds bits-and-blooms/bitset, already
	// in the build through bloom.
	github.com/nlnwa/whatwg-url v0.6.2
	// x/net: idna (UTS #46 mapping and Punycode) for package urlnorm's hosts
	// ("faß.example" -> "xn--fa-hia.example"), too large and subtle to hand-write; the
	// WHATWG HTML parser and tokenizer (html), with its nesting limit, and
	// character-set detection from BOM, Content-Type and <meta> (html/charset) for
	// package extract.
	golang.org/x/net v0.62.0
	// x/text: NFKC/NFD (unicode/norm) and full Unicode case folding (cases.Fold) for
	// package shingle; the legacy character sets (encoding) package extract decodes.
	golang.org/x/text v0.43.0
)

require (
	// brotli: WARC responses sent with Content-Encoding br, as browser-based crawlers
	// record them; the standard library and klauspost/compress have no brotli decoder.
	// The pure-Go port of Google's reference code, maintained, with no dependencies in
	// the build.
	github.com/andybalholm/brotli v1.3.0
	// klauspost/compress: zstd (JSONL and page files compressed with zstd; the standard
	// library has no zstd), and its gzip, a faster drop-in for compress/gzip, for package
	// corpus. Widely used and maintained; pure Go. Also its zlib and flate, for WARC
	// responses sent with Content-Encoding deflate.
	github.com/klauspost/compress v1.20.3
	// fastjson: package corpus's JSONL field extraction. It validates each line and
	// unescapes only the fields asked for: 870 MB/s on 2 KB records here, against 70-95
	// MB/s for encoding/json (map of RawMessage, or a struct), 360 for buger/jsonparser
	// (which does not validate) and 150 for gjson with validation; encoding/json/v2 needs
	// GOEXPERIMENT=jsonv2 in Go 1.26. Maintained (v1.6.10, 2026), no dependencies.
	// The service decodes document bodies with it too (6 µs against encoding/json's
	// 21 µs for 2 KB), falling back to encoding/json for every body it cannot take as
	// encoding/json would; bench service reads verdicts with it.
	github.com/valyala/fastjson v1.6.10
)

require (
	// pebble: package store/pebblestore, the persistent backend. An LSM tree with a write-ahead log whose
	// synced commits are grouped (concurrent Applies share one fsync), atomic batches,
	// prefix Bloom filters and crash recovery, in production under CockroachDB; pure Go
	// (with cgo it links DataDog's zstd, which store does not configure). Writing our own
	// WAL and compaction is how stores lose data.
	github.com/cockroachdb/pebble/v2 v2.1.7
	// client_golang: package server's /metrics (a registry per server, real Prometheus
	// histograms with le buckets). Chosen over VictoriaMetrics/metrics, which is lighter
	// but would add three modules and whose histograms use vmrange buckets that
	// Prometheus' histogram_quantile cannot read; client_golang is already in the build
	// through pebble, so it adds no module.
	github.com/prometheus/client_golang v1.16.0
	// go-redis: package store/redisstore, the Redis Cluster backend (neardup serve
	// --redis). Redis's own maintained client; its ClusterClient follows MOVED and ASK
	// redirects, routes pipelines by slot (one round trip per master) and reloads the
	// slot map after a failover, none of which is ours to hand-write.
	github.com/redis/go-redis/v9 v9.23.0
	// x/sys: fcntl F_GETLK, which names the process holding a store's lock (pebble
	// locks with F_SETLK); already in the build through pebble and x/term.
	golang.org/x/sys v0.49.0
	// x/term: whether standard error is a terminal, so that the bar shows only there.
	golang.org/x/term v0.47.0
)

require (
	github.com/DataDog/zstd v1.5.7 // indirect
	github.com/RadhiFadlillah/whatlanggo v0.0.0-20240916001553-aac1f0f737fc // indirect
	github.com/RaduBerinde/axisds v0.1.0 // indirect
	github.com/RaduBerinde/btreemap v0.0.0-20250419174037-3d62b7205d54 // indirect
	github.com/andybalholm/cascadia v1.3.3 // indirect
	github.com/araddon/dateparse v0.0.0-20210429162001-6b43995a97de // indirect
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/cockroachdb/crlib v0.0.0-20241112164430-1264a2edc35b // indirect
	github.com/cockroachdb/errors v1.11.3 // indirect
	github.com/cockroachdb/logtags v0.0.0-20230118201751-21c54148d20b // indirect
	github.com/cockroachdb/redact v1.1.5 // indirect
	github.com/cockroachdb/swiss v0.0.0-20260820225851-333444432258 // indirect
	github.com/cockroachdb/tokenbucket v0.0.0-20230807174530-cc333fc44b06 // indirect
	github.com/elliotchance/pie/v2 v2.9.0 // indirect
	github.com/forPelevin/gomoji v1.2.0 // indirect
	github.com/getsentry/sentry-go v0.27.0 // indirect
	github.com/go-shiori/dom v0.0.0-20230515143342-73569d674e1c // indirect
	github.com/gogo/protobuf v1.3.2 // indirect
	github.com/gogs/chardet v0.0.0-20211120154057-b7413eaefb8f // indirect
	github.com/golang/protobuf v1.5.3 // indirect
	github.com/golang/snappy v0.0.5-0.20231225225746-43d5d4cd4e0e // indirect
	github.com/hablullah/go-hijri v1.0.2 // indirect
	github.com/hablullah/go-juliandays v1.0.0 // indirect
	github.com/jalaali/go-jalaali v0.0.0-20210801064154-80525e88d958 // indirect
	github.com/kr/pretty v0.3.1 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/markusmobius/go-dateparser v1.2.3 // indirect
	github.com/markusmobius/go-domdistiller v0.0.0-20240926050704-25b8d046ffb4 // indirect
	github.com/markusmobius/go-htmldate v1.9.1 // indirect
	github.com/mattn/go-colorable v0.1.13 // indirect
	github.com/mattn/go-isatty v0.0.22 // indirect
	github.com/matttproud/golang_protobuf_extensions v1.0.4 // indirect
	github.com/minio/minlz v1.0.1-0.20250507153514-87eb42fe8882 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/prometheus/client_model v0.3.0 // indirect
	github.com/prometheus/common v0.42.0 // indirect
	github.com/prometheus/procfs v0.10.1 // indirect
	github.com/rivo/uniseg v0.4.7 // indirect
	github.com/rogpeppe/go-internal v1.9.0 // indirect
	github.com/rs/zerolog v1.33.0 // indirect
	github.com/tetratelabs/wazero v1.8.1 // indirect
	github.com/wasilibs/go-re2 v1.7.0 // indirect
	github.com/wasilibs/wazero-helpers v0.0.0-20240620070341-3dff1577cd52 // indirect
	github.com/yosssi/gohtml v0.0.0-20201013000340-ee4748c638f4 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/exp v0.0.0-20241009180824-f66d83c29e7c // indirect
	google.golang.org/protobuf v1.33.0 // indirect
)
