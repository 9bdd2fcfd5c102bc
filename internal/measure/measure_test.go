package measure

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

// TestCompare checks the measures of equal and of different texts, and that a Sum given
// by the caller is used and a zero one computed.
func TestCompare(t *testing.T) {
	text := "the quick brown fox jumps over the lazy dog near the river bank today"
	res, err := Compare(Text{Name: "a", Text: text}, Text{Name: "b", Text: text}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(text))
	if res.A.SHA256 != hex.EncodeToString(sum[:]) || !res.RawEqual || !res.NormalizedEqual ||
		res.Jaccard != 1 || res.MinHash != 1 || res.SimHashDistance != 0 || res.CosineTF < 0.9999999 ||
		res.EditSimilarity == nil || *res.EditSimilarity != 1 || res.KShingle != 5 || res.MinHashK != 128 {
		t.Errorf("equal texts: %+v", res)
	}
	other := "THE QUICK brown fox, jumps over the lazy dog near the river bank today!"
	res, err = Compare(Text{Text: text}, Text{Text: other, Sum: [32]byte{1}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.RawEqual || !res.NormalizedEqual || res.Jaccard != 1 || res.B.SHA256 != hex.EncodeToString([]byte{1})+"00000000000000000000000000000000000000000000000000000000000000"[:62] {
		t.Errorf("texts equal after normalization: %+v", res)
	}
	if _, err := Compare(Text{}, Text{}, Options{MinHashK: -1}); err == nil {
		t.Error("MinHashK -1: no error")
	}
}

func TestRatio(t *testing.T) {
	for v, want := range map[float64]string{1: "1.0000", 0.99999: ">0.9999", 0: "0.0000", 0.00001: "<0.0001", 0.5: "0.5000"} {
		if got := Ratio(v); got != want {
			t.Errorf("Ratio(%g) = %q, want %q", v, got, want)
		}
	}
}
