package clock

import (
	"sync"
	"testing"
	"time"
)

var start = time.Date(2027, 3, 14, 6, 0, 0, 0, time.UTC)

func TestVirtualTimersFireInOrderAsTimePasses(t *testing.T) {
	v := NewVirtual(start)
	a, b, c := v.NewTimer(3*time.Second), v.NewTimer(time.Second), v.NewTimer(time.Hour)
	if v.Pending() != 3 {
		t.Fatalf("pending %d, want 3", v.Pending())
	}
	v.Advance(5 * time.Second)
	for name, tm := range map[string]Timer{"a": a, "b": b} {
		select {
		case <-tm.C():
		default:
			t.Errorf("timer %s did not fire", name)
		}
	}
	select {
	case <-c.C():
		t.Fatal("timer c fired an hour early")
	default:
	}
	if got := v.Now(); !got.Equal(start.Add(5 * time.Second)) {
		t.Fatalf("now %v", got)
	}
	if !c.Stop() || c.Stop() {
		t.Fatal("Stop should report true once, then false")
	}
	v.Advance(2 * time.Hour)
	select {
	case <-c.C():
		t.Fatal("a stopped timer fired")
	default:
	}
}

func TestVirtualTimerDeliversItsDeadline(t *testing.T) {
	v := NewVirtual(start)
	tm := v.NewTimer(time.Minute)
	v.Advance(time.Hour)
	if got := <-tm.C(); !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("timer delivered %v, want its deadline", got)
	}
}

func TestVirtualNeverMovesBackwards(t *testing.T) {
	v := NewVirtual(start)
	v.Set(start.Add(-time.Hour))
	if !v.Now().Equal(start) {
		t.Fatalf("clock moved backwards to %v", v.Now())
	}
}

func TestVirtualZeroTimerFiresAtOnce(t *testing.T) {
	v := NewVirtual(start)
	select {
	case <-v.NewTimer(0).C():
	default:
		t.Fatal("a zero-duration timer did not fire at once")
	}
}

// TestVirtualConcurrent drives the clock from one goroutine while others
// sleep on it; run with -race.
func TestVirtualConcurrent(t *testing.T) {
	v := NewVirtual(start)
	var wg sync.WaitGroup
	for i := 1; i <= 8; i++ {
		wg.Add(1)
		go func(d time.Duration) {
			defer wg.Done()
			<-v.NewTimer(d).C()
		}(time.Duration(i) * time.Second)
	}
	for v.Pending() < 8 {
		time.Sleep(time.Millisecond)
	}
	v.Advance(10 * time.Second)
	wg.Wait()
}

func TestRealClock(t *testing.T) {
	var c Clock = Real{}
	before := time.Now()
	if c.Now().Before(before) {
		t.Fatal("real clock behind time.Now")
	}
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	if tm.Stop() {
		t.Fatal("Stop after firing should report false")
	}
}
