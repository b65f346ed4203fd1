package metrics

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestBucketsSpanOneMillisecondToAnHour(t *testing.T) {
	if LagBuckets[0] != 0.001 || math.Abs(LagBuckets[len(LagBuckets)-1]-3600) > 1e-6 {
		t.Fatalf("buckets from %v to %v", LagBuckets[0], LagBuckets[len(LagBuckets)-1])
	}
	for i := 1; i < len(LagBuckets); i++ {
		if r := LagBuckets[i] / LagBuckets[i-1]; r > 1.41 {
			t.Fatalf("buckets %v and %v are %.2fx apart", LagBuckets[i-1], LagBuckets[i], r)
		}
	}
}

func TestBucket(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 0},
		{0, 0},
		{time.Millisecond, 0},
		{1001 * time.Microsecond, 1},
		{2 * time.Hour, len(LagBuckets)},
	} {
		if got := Bucket(tc.d); got != tc.want {
			t.Errorf("Bucket(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

// TestPercentileWithinABucket reads quantiles of known samples back within
// the buckets' resolution.
func TestPercentileWithinABucket(t *testing.T) {
	counts := make([]int64, len(LagBuckets)+1)
	// 100 samples: 1..100 ms.
	for ms := 1; ms <= 100; ms++ {
		counts[Bucket(time.Duration(ms)*time.Millisecond)]++
	}
	for _, q := range []float64{0.5, 0.95, 0.99} {
		got, ok := Percentile(LagBuckets, counts, q)
		want := q * 0.1
		if !ok || got < want/1.4 || got > want*1.4 {
			t.Errorf("p%v = %v, want about %v", q*100, got, want)
		}
	}
	if _, ok := Percentile(LagBuckets, make([]int64, len(LagBuckets)+1), 0.5); ok {
		t.Error("a percentile of no samples")
	}
	inf := make([]int64, len(LagBuckets)+1)
	inf[len(LagBuckets)] = 3
	if got, _ := Percentile(LagBuckets, inf, 0.99); got != LagBuckets[len(LagBuckets)-1] {
		t.Errorf("p99 of +Inf samples = %v, want the largest bound", got)
	}
}

func TestTenantLabelsBounded(t *testing.T) {
	m := New()
	for i := range MaxTenantLabels {
		if got := m.Tenant(fmt.Sprint("t", i)); got != fmt.Sprint("t", i) {
			t.Fatalf("tenant %d labelled %q", i, got)
		}
	}
	if got := m.Tenant("one-too-many"); got != OtherTenant {
		t.Fatalf("tenant past the bound labelled %q, want %q", got, OtherTenant)
	}
	if got := m.Tenant("t0"); got != "t0" {
		t.Fatalf("a known tenant relabelled %q", got)
	}
}
