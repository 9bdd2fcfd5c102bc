//go:build !race

package extract_test

// raceEnabled reports a -race build, in which TestEvalAEB runs only Extract.
const raceEnabled = false
