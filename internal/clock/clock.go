// Package clock is the one source of time for engine logic. Engine code never
// calls time.Now or time.NewTimer directly; it asks a Clock, so production
// runs on the wall clock and tests run on a Virtual clock that they move by
// hand, driving days of schedule time in milliseconds.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, like *time.Timer.
type Timer interface {
	// C delivers the clock's time when the timer fires.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer wraps time.NewTimer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop() bool          { return r.t.Stop() }

// Virtual is a clock that moves only when told to. Timers fire, in order of
// their deadlines, as Advance or Set passes them. Safe for concurrent use.
type Virtual struct {
	mu     sync.Mutex
	now    time.Time
	timers []*virtualTimer
}

// NewVirtual returns a virtual clock reading start.
func NewVirtual(start time.Time) *Virtual { return &Virtual{now: start} }

// Now returns the virtual time.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// NewTimer returns a timer that fires when the clock reaches now + d; a
// non-positive d fires at once.
func (v *Virtual) NewTimer(d time.Duration) Timer {
	v.mu.Lock()
	defer v.mu.Unlock()
	t := &virtualTimer{v: v, at: v.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.fire(v.now)
		return t
	}
	v.timers = append(v.timers, t)
	return t
}

// Advance moves the clock forward by d, firing the timers it passes.
func (v *Virtual) Advance(d time.Duration) {
	v.Set(v.Now().Add(d))
}

// Set moves the clock to t (never backwards: an earlier t is ignored, as a
// monotonic clock would), firing the timers it passes in deadline order.
func (v *Virtual) Set(t time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if t.Before(v.now) {
		return
	}
	sort.SliceStable(v.timers, func(i, j int) bool { return v.timers[i].at.Before(v.timers[j].at) })
	keep := v.timers[:0]
	for _, tm := range v.timers {
		if !tm.at.After(t) {
			tm.fire(tm.at)
			continue
		}
		keep = append(keep, tm)
	}
	v.timers = keep
	v.now = t
}

// Pending reports how many timers wait; tests use it to know a goroutine
// has gone to sleep on the clock before they advance it.
func (v *Virtual) Pending() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.timers)
}

type virtualTimer struct {
	v     *Virtual
	at    time.Time
	c     chan time.Time
	fired bool
}

func (t *virtualTimer) C() <-chan time.Time { return t.c }

// fire delivers once; the caller holds v.mu.
func (t *virtualTimer) fire(now time.Time) {
	if !t.fired {
		t.fired = true
		t.c <- now
	}
}

func (t *virtualTimer) Stop() bool {
	t.v.mu.Lock()
	defer t.v.mu.Unlock()
	if t.fired {
		return false
	}
	for i, tm := range t.v.timers {
		if tm == t {
			t.v.timers = append(t.v.timers[:i], t.v.timers[i+1:]...)
			break
		}
	}
	t.fired = true // a stopped timer never fires
	return true
}
