// Package mix holds the 64-bit finalizer that neardup's packages use to spread ids and
// derive seeds. Its output is part of frozen formats (MinHash signatures, LSH band keys),
// so it must never change; the golden tests of those packages pin it.
package mix

// Splitmix64 is the splitmix64 finalizer (Stafford's variant 13): a bijection of uint64 in
// which every output bit depends on every input bit. It costs a few nanoseconds.
func Splitmix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
