package timetable

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// The span a zone's fingerprint covers: fixed, so that two readings of the
// same rules give the same fingerprint whenever they are taken. It reaches
// far enough back to cover any cursor still in use and far enough ahead to
// cover any rule a tz release announces.
var (
	fingerprintFrom = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	fingerprintTo   = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
)

// ZoneFingerprint loads the named zone from the tz database in use and
// returns a digest of its UTC offsets from 2000 to 2100: every offset period
// (where it starts, its offset) in that span. Two tz releases give a zone
// the same fingerprint exactly when they put the same instants at the same
// offsets there, which is all a cron firing in the zone depends on
// (abbreviations and the isDST flag are left out, as the time engine never
// reads them). So a new tz release changes the fingerprints of the zones
// whose rules it changed, and only those.
func ZoneFingerprint(name string) (string, error) {
	loc, err := LoadZone(name)
	if err != nil {
		return "", err
	}
	return fingerprint(loc), nil
}

// UnloadableFingerprint is what LoadedFingerprint gives a zone the tz
// database in use lacks: it equals no real fingerprint, so a release that
// dropped a zone counts as one that changed its rules.
const UnloadableFingerprint = "unloadable"

// LoadedFingerprint is ZoneFingerprint for comparing the rules in use with
// recorded ones: a zone that does not load gets UnloadableFingerprint.
func LoadedFingerprint(name string) string {
	fp, err := ZoneFingerprint(name)
	if err != nil {
		return UnloadableFingerprint
	}
	return fp
}

func fingerprint(loc *time.Location) string {
	h := sha256.New()
	var buf [16]byte
	u := fingerprintFrom
	for range 4096 { // a zone changes offset a few times a year at most
		p := periodAt(loc, u)
		binary.BigEndian.PutUint64(buf[:8], uint64(max(p.start, fingerprintFrom)))
		binary.BigEndian.PutUint64(buf[8:], uint64(p.off))
		h.Write(buf[:])
		if p.end >= fingerprintTo || p.end >= openEnd {
			break
		}
		u = p.end
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
