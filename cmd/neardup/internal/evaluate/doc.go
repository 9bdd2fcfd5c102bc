// Package evaluate scores the pairs a deduplication run found against labelled
// duplicates: precision, recall and F1 over a sweep of thresholds, or recall and false
// positives by band of labelled similarity. It is the harness behind `neardup eval`,
// which maps its flags to these functions; it reads and writes plain values and
// io.Readers and io.Writers, so tests and other tools use it without the command line.
//
//	truth, err := evaluate.ReadLabels(labelsFile, "labels.tsv", 0.8)
//	found, bySimilarity, err := evaluate.ReadRunPairs(pairsFile, "pairs.jsonl")
//	rows := evaluate.Sweep(truth, found, bySimilarity, 0.8)
//	err = evaluate.WriteSweep(os.Stdout, rows, truth, len(found), false)
//
// # Caveats
//
// Labelled pairs whose ids the run never saw count as misses. A run's pairs.jsonl lists
// an exact group of n documents as n-1 pairs to its first document; ReadRunPairs expands
// such groups to every pair they imply, which is quadratic in a group's size.
package evaluate
