// Package eval compares package extract with go-trafilatura and go-readability on the
// Article Extraction Benchmark and the Debian documentation pages, for accuracy (one
// scorer, evaldata.AEBScore, for all three) and speed (side by side in one benchmark
// run). It is a module of its own so that the main module links neither extractor:
//
//	cd eval && go test -run AEB -v                          # precision, recall, F1
//	cd eval && go test -run '^$' -bench . -cpu 1 -count 5   # MB/s and pages/s
//
// It holds no code but its tests.
package eval
