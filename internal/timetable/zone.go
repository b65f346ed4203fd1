package timetable

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sched-dev/sched/internal/suggest"
)

// MaxZoneNameLen caps an IANA zone name; the longest real one is 32 bytes.
const MaxZoneNameLen = 64

// zoneData is one reading of the tz database: the locations loaded from it
// and its version. ReloadZones swaps in a fresh one; a caller that loaded a
// location from the one before keeps an immutable *time.Location, so a
// computation in progress finishes under the rules it started with.
type zoneData struct {
	locs    sync.Map // zone name -> *time.Location
	version func() string
	names   func() []string // the zone and link names tzdata.zi lists
}

func newZoneData() *zoneData {
	return &zoneData{version: sync.OnceValue(readVersion), names: sync.OnceValue(readZoneNames)}
}

var zones atomic.Pointer[zoneData]

func init() { zones.Store(newZoneData()) }

// ReloadZones drops every location loaded so far and the tz version read,
// so that the next LoadZone and TZVersion read the tz database again (after
// the operator installed a new one, or pointed ZONEINFO elsewhere). It is
// safe while other goroutines load zones and compute firings: they keep
// the locations they hold, and a Timetable parsed before the reload keeps
// its old rules until it is parsed again. It returns the version now in use.
func ReloadZones() string {
	zones.Store(newZoneData())
	zoneCaches.Clear()
	return TZVersion()
}

// LoadZone validates an IANA zone name and loads its rules from the host's
// tz database (Go's lookup order, ZONEINFO first). It refuses "" and "Local"
// (they would silently mean UTC or the host's zone), paths, and names that
// are too long, none of which time.LoadLocation rejects on its own.
func LoadZone(name string) (*time.Location, error) {
	zd := zones.Load()
	if l, ok := zd.locs.Load(name); ok {
		return l.(*time.Location), nil
	}
	switch {
	case name == "":
		return nil, invalid("time_zone", "time zone is empty: give an IANA name such as Europe/Berlin or UTC")
	case name == "Local":
		return nil, invalid("time_zone", "time zone \"Local\": not allowed, it depends on the host; give an IANA name")
	case len(name) > MaxZoneNameLen:
		return nil, invalid("time_zone", "time zone: %d bytes, longer than the limit of %d", len(name), MaxZoneNameLen)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/_-+", r)
		if !ok {
			return nil, unknownZone(zd, name)
		}
	}
	if strings.HasPrefix(name, "/") || strings.Contains(name, "..") {
		return nil, unknownZone(zd, name)
	}
	loc, err := loadLocation(name)
	if err != nil {
		return nil, unknownZone(zd, name)
	}
	zd.locs.Store(name, loc)
	return loc, nil
}

// ZoneNames lists the zones and links of the tz database in use, sorted,
// as its tzdata.zi names them; none when it has no tzdata.zi (Go's
// embedded zoneinfo.zip). Shell completion offers them.
func ZoneNames() []string { return slices.Clone(zones.Load().names()) }

// unknownZone is the error for a name the tz database does not hold,
// with the name probably meant when there is one: the same name in
// another case (europe/berlin), else a name one edit away, or two for a
// longer name (Europe/Berln).
func unknownZone(zd *zoneData, name string) error {
	if hint := nearestZone(zd.names(), name); hint != "" {
		return invalid("time_zone", "time zone %q: unknown IANA zone; did you mean %s?", name, hint)
	}
	return invalid("time_zone", "time zone %q: unknown IANA zone", name)
}

// nearestZone is the zone of names that name was probably meant to be,
// or "".
func nearestZone(names []string, name string) string {
	for _, z := range names {
		if strings.EqualFold(z, name) {
			return z
		}
	}
	limit := 1
	if len(name) >= 8 {
		limit = 2
	}
	return suggest.Closest(name, names, limit)
}

// readZoneNames lists the zones and links of the tz database in use, from
// its tzdata.zi (the lines "Z NAME ..." and "L TARGET NAME"), found where
// readVersion finds it; none when there is no tzdata.zi (Go's embedded
// zoneinfo.zip), and then no name is suggested.
func readZoneNames() []string {
	dirs := []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ"}
	if zi := os.Getenv("ZONEINFO"); zi != "" {
		dirs = []string{zi}
	}
	for _, dir := range dirs {
		f, err := os.Open(filepath.Join(dir, "tzdata.zi"))
		if err != nil {
			continue
		}
		defer f.Close()
		var names []string
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			switch fs := strings.Fields(sc.Text()); {
			case len(fs) >= 2 && fs[0] == "Z":
				names = append(names, fs[1])
			case len(fs) >= 3 && fs[0] == "L":
				names = append(names, fs[2])
			}
		}
		sort.Strings(names)
		return names
	}
	return nil
}

// loadLocation reads a zone's rules. Go's time package reads the ZONEINFO
// variable once per process, so when ZONEINFO names a directory the zone
// file is read from it here (time.LoadLocationFromTZData): a reload after
// ZONEINFO changed then really reads the new directory. Anything else
// (ZONEINFO unset or a zip file, a zone the directory lacks) goes through
// time.LoadLocation, which reads the system's zone files afresh on every
// call.
func loadLocation(name string) (*time.Location, error) {
	if zi := os.Getenv("ZONEINFO"); zi != "" && name != "UTC" {
		if b, err := os.ReadFile(filepath.Join(zi, filepath.FromSlash(name))); err == nil {
			return time.LoadLocationFromTZData(name, b)
		}
	}
	return time.LoadLocation(name)
}

func readVersion() string {
	if zi := os.Getenv("ZONEINFO"); zi != "" {
		if v := readTZVersion(filepath.Join(zi, "tzdata.zi")); v != "" {
			return v
		}
		return "unknown (ZONEINFO=" + zi + ")"
	}
	for _, dir := range []string{"/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ"} {
		if v := readTZVersion(filepath.Join(dir, "tzdata.zi")); v != "" {
			return v
		}
	}
	if _, err := os.Stat(filepath.Join(runtime.GOROOT(), "lib", "time", "zoneinfo.zip")); err == nil {
		return "unknown (Go's zoneinfo.zip)"
	}
	return "unknown"
}

// TZVersion reports the version of the tz database in use ("2025b"), read
// from tzdata.zi, or "unknown (...)" saying where the rules come from. It is
// read once per reading of the database (see ReloadZones).
func TZVersion() string { return zones.Load().version() }

func readTZVersion(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "# version "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// period is a span of instants [start, end) with one UTC offset.
type period struct {
	start, end int64 // unix seconds; ±math.MaxInt64/4 when open-ended
	off        int64 // seconds east of UTC
}

const (
	openStart = math.MinInt64 / 4
	openEnd   = math.MaxInt64 / 4
	// maxOffsetSwing bounds how far a wall time can sit from its instant's
	// neighbours' walls: offsets lie within ±16 h, one change is at most 26 h
	// (Apia skipped a whole day in 2011).
	maxOffsetSwing = 30 * 3600
)

// periodAt returns the offset period containing instant u. It does not trust
// ZoneBounds blindly: golang/go#81583 makes it return an end that is not
// after t on some dates with Go's slim tz data, and with that data a zone
// whose future comes from its rule string gets a bound at each new year
// where nothing changes (Africa/Cairo: 2028-12-31T00:00Z, +02:00 on both
// sides). Such answers are replaced by a search: a period ends where the
// offset changes, so two neighbouring periods never share an offset (a
// wall time inside both would otherwise read as a repeat).
func periodAt(loc *time.Location, u int64) period {
	t := time.Unix(u, 0).In(loc)
	_, off := t.Zone()
	s, e := t.ZoneBounds()
	p := period{start: openStart, end: openEnd, off: int64(off)}
	if !s.IsZero() {
		p.start = s.Unix()
	}
	if !e.IsZero() {
		p.end = e.Unix()
	}
	if p.start > u {
		p.start = searchChange(loc, u, -1, p.off)
	}
	if p.end <= u {
		p.end = searchChange(loc, u, +1, p.off)
	}
	// Step over bounds where the offset does not change, a few at most
	// (one a year with the slim data), by the neighbouring period's own
	// bounds.
	for range maxFalseBounds {
		if p.start <= openStart || offsetAt(loc, p.start-1) != p.off {
			break
		}
		s, _ := time.Unix(p.start-1, 0).In(loc).ZoneBounds()
		if s.IsZero() {
			p.start = openStart
			break
		}
		if s.Unix() >= p.start {
			p.start = searchChange(loc, p.start-1, -1, p.off)
			break
		}
		p.start = s.Unix()
	}
	for range maxFalseBounds {
		if p.end >= openEnd || offsetAt(loc, p.end) != p.off {
			break
		}
		_, e := time.Unix(p.end, 0).In(loc).ZoneBounds()
		if e.IsZero() {
			p.end = openEnd
			break
		}
		if e.Unix() <= p.end {
			p.end = searchChange(loc, p.end, +1, p.off)
			break
		}
		p.end = e.Unix()
	}
	return p
}

// maxFalseBounds bounds how many bounds without a change of offset
// periodAt steps over on each side.
const maxFalseBounds = 4

// zoneCache remembers the last offset period looked up in one zone. Schedules
// in a zone mostly ask about the same months, so most lookups are a range
// check instead of two binary searches over the zone's transitions. The
// period is immutable; swapping the pointer is safe across goroutines.
type zoneCache struct {
	loc  *time.Location
	last atomic.Pointer[period]
}

var zoneCaches sync.Map // *time.Location -> *zoneCache

func cacheFor(loc *time.Location) *zoneCache {
	if zc, ok := zoneCaches.Load(loc); ok {
		return zc.(*zoneCache)
	}
	zc, _ := zoneCaches.LoadOrStore(loc, &zoneCache{loc: loc})
	return zc.(*zoneCache)
}

// periodAt is the package-level periodAt through the cache.
func (zc *zoneCache) periodAt(u int64) period {
	if p := zc.last.Load(); p != nil && p.start <= u && u < p.end {
		return *p
	}
	p := periodAt(zc.loc, u)
	zc.last.Store(&p)
	return p
}

// searchChange finds the nearest instant from u in direction dir where the
// offset differs from off: the start (dir -1) or end (dir +1) of u's period.
func searchChange(loc *time.Location, u int64, dir int64, off int64) int64 {
	offAt := func(x int64) int64 { return offsetAt(loc, x) }
	const step = 6 * 3600
	lo := u
	for i := 0; i < 4*400; i++ { // look up to 400 days away
		hi := lo + dir*step
		if offAt(hi) != off {
			// binary search between lo (same) and hi (different)
			for (hi-lo)*dir > 1 {
				mid := lo + (hi-lo)/2
				if offAt(mid) == off {
					lo = mid
				} else {
					hi = mid
				}
			}
			if dir > 0 {
				return hi
			}
			return lo
		}
		lo = hi
	}
	if dir > 0 {
		return openEnd
	}
	return openStart
}

// zoneWindow is the list of offset periods around an instant, enough to
// resolve any wall time near it. Fixed size: resolving never allocates.
type zoneWindow struct {
	n int
	p [8]period
}

// window collects the periods that overlap [from, to].
func window(loc *time.Location, from, to int64) zoneWindow {
	var w zoneWindow
	u := from
	for w.n < len(w.p) {
		p := periodAt(loc, u)
		w.p[w.n] = p
		w.n++
		if p.end > to || p.end >= openEnd {
			break
		}
		u = p.end
	}
	return w
}

// resolution is what a wall time means as instants.
type resolution struct {
	n      int      // 0 = gap, 1 = normal, 2 = repeat
	at     [2]int64 // the instants, earliest first
	gapEnd int64    // for a gap: the first instant after it
	change int64    // for a repeat: the first instant of the second instant's offset
}

// resolve maps wall seconds to instants in loc by enumerating the offsets in
// force around it: no instant means a gap, two mean a repeat. It never uses
// time.Date in a local zone, which "does not guarantee which" it picks.
func resolve(loc *time.Location, w int64) resolution {
	zw := window(loc, w-maxOffsetSwing, w+maxOffsetSwing)
	var r resolution
	for i := 0; i < zw.n; i++ {
		p := zw.p[i]
		u := w - p.off
		if u >= p.start && u < p.end && r.n < 2 {
			r.at[r.n] = u
			r.change = p.start // kept for the second: the change it follows
			r.n++
		}
	}
	if r.n == 0 {
		// The gap ends where the first period whose walls start after w begins.
		for i := 0; i < zw.n; i++ {
			if p := zw.p[i]; p.start+p.off > w {
				r.gapEnd = p.start
				break
			}
		}
	}
	return r
}
