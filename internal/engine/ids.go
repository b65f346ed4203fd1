package engine

import (
	"encoding/binary"
	"hash/fnv"
	"time"
)

// stableUint64 is a deterministic 64-bit hash of a string and a number: the
// "random" of flexible jitter and retry backoff, the same after every
// restart and on every node.
func stableUint64(s string, n int64) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(n))
	h.Write(b[:])
	// fnv's low bits mix poorly for short inputs; finish with a 64-bit mixer
	// (splitmix64's) so "mod W" is uniform.
	x := h.Sum64()
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// flexOffset is the stable offset of an occurrence within a flexible window
// w: hash(occurrence_id) mod w, to the millisecond. Deterministic, so
// every node and every restart spreads a flexible burst the same way.
func flexOffset(occurrenceID string, w time.Duration) time.Duration {
	ms := w.Milliseconds()
	if ms <= 0 {
		return 0
	}
	return time.Duration(stableUint64(occurrenceID, 0)%uint64(ms)) * time.Millisecond
}

// backoff is the delay before the attempt after attempt n (1-based, counted
// since the last replay): full jitter, random(0, min(cap, base*2^(n-1))),
// which spreads the retries of a failing burst instead of bunching them, with the "random" drawn from hash(occurrence_id, attempt), so
// a retried nack computes the same delay.
func backoff(occurrenceID string, attempt int64, n int, base, cap time.Duration) time.Duration {
	ceil := cap
	if n < 1 {
		n = 1
	}
	if n-1 < 40 {
		if d := base << (n - 1); d > 0 && d < cap {
			ceil = d
		}
	}
	ms := ceil.Milliseconds()
	if ms <= 0 {
		return 0
	}
	return time.Duration(stableUint64(occurrenceID, attempt)%uint64(ms+1)) * time.Millisecond
}
