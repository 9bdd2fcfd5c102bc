package bench

import (
	"math"
	"math/bits"
	"time"
)

// histogram is a log-linear histogram of durations, the layout of an HDR histogram with
// 7 significant bits: values below 128 ns have a bucket each, and every power-of-two range
// above is cut into 128 equal buckets, so a quantile is off by less than 1/128 (0.8%) of
// its value, over the whole range of a time.Duration, in 57 KiB. Recording is a shift and
// an increment. It is not safe for concurrent use: each load client keeps its own and
// merge adds them up. The zero value is empty and ready.
//
// It is a few lines here rather than github.com/HdrHistogram/hdrhistogram-go: the bench
// needs record, merge and quantiles only, and the module's go.mod stays lean.
type histogram struct {
	counts        []uint64 // allocated on the first record
	n             uint64
	sum, min, max time.Duration
}

const (
	histSubBits = 7
	histSub     = 1 << histSubBits
	histBuckets = histSub + (64-histSubBits-1)*histSub // up to the range 2^62..2^63
)

// histBucket returns the bucket of v >= 0.
func histBucket(v uint64) int {
	if v < histSub {
		return int(v)
	}
	e := bits.Len64(v) - histSubBits - 1 // v>>e is in [128, 256)
	return histSub + e*histSub + int(v>>e) - histSub
}

// histUpper returns the largest value in bucket i.
func histUpper(i int) uint64 {
	if i < histSub {
		return uint64(i)
	}
	e := (i - histSub) / histSub
	low := uint64(histSub+(i-histSub)%histSub) << e
	return low + 1<<e - 1
}

// record adds one duration; a negative one counts as 0.
func (h *histogram) record(d time.Duration) {
	d = max(d, 0)
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
		h.min = d
	}
	h.counts[histBucket(uint64(d))]++
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	h.n++
	h.sum += d
}

// merge adds o's counts to h.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// quantile returns the smallest recorded value v (to the bucket's precision: the
// bucket's largest value, at most the maximum recorded) such that a share q of the values
// are at most v; 0 for an empty histogram.
func (h *histogram) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(time.Duration(histUpper(i)), h.max)
		}
	}
	return h.max
}

// mean returns the mean of the values, 0 for an empty histogram.
func (h *histogram) mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return h.sum / time.Duration(h.n)
}
