// Package bench holds the workloads and measurements of `neardup bench`: generated
// inputs whose duplicates are known (planted), the timed runs over them, and what the
// runs recovered. The command line maps its flags to these functions and prints their
// results.
//
// The workloads: Findall (random fingerprints with planted near copies, searched with a
// hamming.Finder); Corpus (synthetic text with planted near copies, for bench dedup and
// bench service; Dedup times the batch engine on it); the dense cloud's files (WriteDenseDocs, WriteDenseLabels).
//
// The load generator of bench service: a Target (the service), the Docs it is sent
// (a Corpus, or HTML pages), and a Workload of concurrent clients that send them in
// Phases, closed or open loop, and count every response into a ServiceResult;
// Preload adds documents as fast as the service takes them; Emit and WrkScript write
// the requests for wrk instead. Its request path encodes into per-client buffers,
// writes each request on its client's own connection in one system call and reads the
// response on the same goroutine (conn), with a reused fastjson parser, so that the
// generator takes as little of a shared machine's CPU from the service as it can.
//
// # Caveats
//
// Times are wall-clock times of this process on whatever else the machine runs; compare
// runs taken side by side. Peak memory is the process's (procstat.PeakRSS), which
// includes the generated input.
package bench
