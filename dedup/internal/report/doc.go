// Package report writes report.html, the page of `neardup dedup` that a person opens in a
// browser to see what a run found and decide whether to trust it. It is one
// self-contained file: inline CSS, plots drawn here as inline SVG, no script, no font,
// image or stylesheet loaded from anywhere; a print or a file sent by mail shows the same.
//
// The page has, in this order:
//
//   - the summary (counts, dropped bytes, timings, memory: Data.Summary) and the
//     parameters of the run (Data.Params), as given;
//   - the cluster size distribution as a bar chart, one bar per size up to 24 sizes and
//     powers of two (2–3, 4–7...) past that;
//   - the histogram of the verified pairs' distances or similarities, with the threshold
//     drawn as a dashed line;
//   - the largest and the borderline clusters: for each member shown, the representative's
//     text and the member's side by side, the words only in the representative struck
//     through in red (<del>) and those only in the member underlined in green (<ins>);
//   - the mirrors, pairs of sites that carry the same content (mirror.Find).
//
// The counts axis of both charts turns logarithmic when the largest count is 100 times the
// smallest or more. Every chart has an SVG <title> and <desc> and, below it, a table of
// its numbers (in a <details> element: no script is needed to open it, nor to open and
// close the clusters).
//
//	err := report.Write(f, report.Data{Title: "neardup dedup: corpus.jsonl", ...})
//
// # Determinism
//
// The bytes of the page depend on the Data only: there is no time stamp (pass one in
// Data.Summary if wanted), no random id, no map iteration. Sections keep the order of the
// Data's slices, except that cluster sizes and histogram bins are sorted; ids and anchors
// come from positions. Coordinates are computed without fused multiply-adds and printed to
// a tenth of a unit, and tick steps are found without logarithms, so the same Data gives
// the same bytes on every machine and however many threads the engine used to compute it.
// testdata/report.golden.html pins them.
//
// # Safety
//
// Texts, ids, URLs and scores are corpus content and untrusted: invalid UTF-8 is replaced
// by U+FFFD, then they are escaped as html/template escapes them (internal/htmlpage), and
// they land only in element text and in double-quoted attribute values; no corpus content
// becomes a link. The page is written by Go code, not by html/template, whose method
// lookups by reflection would cost the neardup binary 13 MB. Texts keep their line breaks, wrap long lines
// anywhere, and take their direction (right-to-left or not) from their own first letters.
//
// # Word differences
//
// Texts are split at Unicode word boundaries (UAX #29: words, spaces and punctuation are
// tokens, CJK text is one token per character) and compared with Myers' O(ND) algorithm,
// which finds a shortest edit script. A change is slid as far down the text as it goes,
// and spaces between two changed words join them, so the marks fall on whole phrases.
// Package github.com/sergi/go-diff was not used: it diffs characters (words need a
// token-to-rune mapping around it) and stops at a wall-clock deadline by default, which
// would make the page depend on the machine's load; the algorithm here is a hundred lines.
//
// # Caveats
//
// The caller truncates texts; the diff bounds its own cost anyway: it reads at most 4,000
// tokens of each text (the rest is shown unmarked, and the page says so) and looks for at
// most 600 edits, past which everything between the texts' common head and tail is marked
// as changed: such texts are not near copies. One comparison then costs at most about
// 600 × 8,000 steps of Myers' algorithm and memory of the same order.
//
// Write holds the whole page in memory before writing it, about twice the texts shown.
//
// The logarithmic counts axis places ticks and bars with math.Log1p, whose last bits
// could in principle differ between architectures; printed to a tenth of a unit, that
// would change a byte only on an exact rounding tie.
package report
