package shingle

import (
	_ "embed"
	"strings"
)

//go:embed stopwords_en.txt
var stopWordsEN string

// englishStopWords returns the shipped English stop-word list.
func englishStopWords() []string {
	var list []string
	for line := range strings.Lines(stopWordsEN) {
		line = strings.TrimSpace(line)
		if line != "" && line[0] != '#' {
			list = append(list, line)
		}
	}
	return list
}
