package timetable

import "time"

// CountFirings counts the firings in [from, to], both inclusive, stopping
// at limit: it returns limit when there are limit or more. It is how a request
// that walks firings (a reconcile, a simulation) bounds its cost before
// it walks them: an every or an at counts in constant time, whatever the
// range; a cron expression walks its firings, at most limit of them.
func (s *Timetable) CountFirings(from, to time.Time, limit int) int {
	if limit <= 0 || to.Before(from) {
		return 0
	}
	switch s.def.Kind {
	case KindAt:
		if at := time.Unix(s.at, 0); !at.Before(from) && !at.After(to) {
			return 1
		}
		return 0
	case KindEvery:
		return s.countEvery(from, to, limit)
	}
	n := 0
	f, ok := s.Next(from.Add(-time.Nanosecond))
	for ok && !f.At.After(to) && n < limit {
		n++
		f, ok = s.Next(f.At)
	}
	return n
}

// countEvery counts the instants anchor + k*every (k >= 0, up to the last
// instant an interval fires) in [from, to], at most limit.
func (s *Timetable) countEvery(from, to time.Time, limit int) int {
	lo, hi := max(ceilUnix(from), s.anchor), min(to.Unix(), lastEvery)
	if hi < lo {
		return 0
	}
	first := s.anchor + (lo-s.anchor+s.every-1)/s.every*s.every // the first firing at or after lo
	if first > hi {
		return 0
	}
	n := (hi-first)/s.every + 1
	if n > int64(limit) {
		return limit
	}
	return int(n)
}

// ceilUnix is t in whole seconds, rounded up: firings are whole seconds.
func ceilUnix(t time.Time) int64 {
	u := t.Unix()
	if t.Nanosecond() > 0 {
		u++
	}
	return u
}
