package simhash

import (
	"errors"
	"slices"
	"testing"
)

func ints(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Cases from simhash-py test/test.py TestShingle, plus edges.
func TestShingle(t *testing.T) {
	for _, c := range []struct {
		name   string
		tokens []int
		window int
		want   [][]int
	}{
		{"fewer than window", ints(3), 4, nil},
		{"basic", ints(10), 4, [][]int{
			{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6},
			{4, 5, 6, 7}, {5, 6, 7, 8}, {6, 7, 8, 9},
		}},
		{"exactly window", ints(4), 4, [][]int{{0, 1, 2, 3}}},
		{"window 1", ints(3), 1, [][]int{{0}, {1}, {2}}},
		{"empty", nil, 2, nil},
	} {
		got, err := Shingle(c.tokens, c.window)
		if err != nil {
			t.Errorf("%s: Shingle: %v", c.name, err)
			continue
		}
		if !slices.EqualFunc(got, c.want, slices.Equal) {
			t.Errorf("%s: Shingle(%v, %d) = %v, want %v", c.name, c.tokens, c.window, got, c.want)
		}
	}
	for _, window := range []int{0, -1} {
		got, err := Shingle(ints(10), window)
		if !errors.Is(err, ErrWindow) || got != nil {
			t.Errorf("Shingle(range(10), %d) = %v, %v; want nil and ErrWindow", window, got, err)
		}
	}
}

func TestShingleCapacity(t *testing.T) {
	tokens := []string{"a", "b", "c", "d"}
	sh, err := Shingle(tokens, 2)
	if err != nil {
		t.Fatal(err)
	}
	_ = append(sh[0], "x") // must not overwrite tokens[2]
	if tokens[2] != "c" {
		t.Errorf("appending to a shingle overwrote the tokens: %v", tokens)
	}
}
