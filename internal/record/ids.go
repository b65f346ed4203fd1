package record

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strings"
	"time"
)

// Every id sched mints is minted here, in one alphabet: RFC 4648 base32hex
// in lower case without padding (0-9 then a-v). It is short, case-stable,
// safe in URLs, file names and log lines, and in ASCII order, so encodings
// of equal length sort like the numbers they encode: an id that starts with
// a big-endian time sorts by that time.
var idEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// Id prefixes name the record an id belongs to.
const (
	SchedulePrefix   = "sch_"
	OccurrencePrefix = "occ_"
	AttemptPrefix    = "att_"
	// manualPrefix starts a manual occurrence's id: "z" is outside the
	// alphabet, so manual ids never look like, and sort after, every
	// timetable occurrence's id.
	manualPrefix = OccurrencePrefix + "z"
)

// NewScheduleID returns a new schedule id: "sch_" and 26 characters, 48 bits
// of now in Unix milliseconds then 80 bits read from random (crypto/rand's
// Reader in production). Ids sort by creation time, so listing by id lists
// in creation order.
func NewScheduleID(now time.Time, random io.Reader) (string, error) {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	if _, err := io.ReadFull(random, b[6:]); err != nil {
		return "", fmt.Errorf("new schedule id: %w", err)
	}
	return SchedulePrefix + idEncoding.EncodeToString(b[:]), nil
}

// NewScheduleIDs returns n new schedule ids that follow one another: the
// first as NewScheduleID makes one (48 bits of now, then 80 bits read
// from random, in one read for the whole range), each next one the number
// after it. A bulk create mints its ids so, one per item: the schedules a
// batch created then hold one range of ids, which its single audit entry
// names (ScheduleIDRange) and which lists together in id order. The random
// part of the first is drawn again when the range would run past its end,
// so every id of the range has the time of now; with 80 random bits,
// another range or id minted in the same millisecond falls inside it with
// a chance of about n in 2^80.
func NewScheduleIDs(now time.Time, random io.Reader, n int) ([]string, error) {
	if n <= 0 {
		return nil, nil
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	for {
		if _, err := io.ReadFull(random, b[6:]); err != nil {
			return nil, fmt.Errorf("new schedule ids: %w", err)
		}
		hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
		// The random part's top 16 bits are hi's low 16: all ones, with
		// lo within n of its end, and the range would carry into the
		// time.
		if hi&0xffff != 0xffff || lo <= math.MaxUint64-uint64(n-1) {
			break
		}
	}
	out := make([]string, n)
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	for i := range out {
		binary.BigEndian.PutUint64(b[:8], hi)
		binary.BigEndian.PutUint64(b[8:], lo)
		out[i] = SchedulePrefix + idEncoding.EncodeToString(b[:])
		lo++
		if lo == 0 {
			hi++
		}
	}
	return out, nil
}

// ScheduleIDRange is how an audit entry names a range of schedule ids
// (NewScheduleIDs) as its target: "FIRST..LAST". ParseScheduleIDRange
// reads it back.
func ScheduleIDRange(first, last string) string { return first + idRangeSep + last }

const idRangeSep = ".."

// ParseScheduleIDRange reads a ScheduleIDRange; ok is false when target
// is not one.
func ParseScheduleIDRange(target string) (first, last string, ok bool) {
	first, last, ok = strings.Cut(target, idRangeSep)
	if !ok || !IsScheduleID(first) || !IsScheduleID(last) || len(first) != len(last) || first > last {
		return "", "", false
	}
	return first, last, true
}

// ScheduleIDTimeFloor is the lowest schedule id that can be minted in the
// same millisecond as id: its time, then 80 zero bits. Every id of a
// range NewScheduleIDs minted has its first's time, so the first of the
// range holding id lies between this floor and id. ok is false when id is
// not a minted schedule id.
func ScheduleIDTimeFloor(id string) (floor string, ok bool) {
	if !IsScheduleID(id) {
		return "", false
	}
	raw, err := idEncoding.DecodeString(id[len(SchedulePrefix):])
	if err != nil || len(raw) != 16 {
		return "", false
	}
	var b [16]byte
	copy(b[:6], raw[:6])
	return SchedulePrefix + idEncoding.EncodeToString(b[:]), true
}

// IsScheduleID reports whether ref has the form of a schedule id rather
// than a name.
func IsScheduleID(ref string) bool { return strings.HasPrefix(ref, SchedulePrefix) }

// ShardOf is the logical shard of a schedule among n: FNV-1a (32 bits) of
// its id, mod n. It must never change: a schedule's shard is stored with it.
func ShardOf(scheduleID string, n int) int {
	h := fnv.New32a()
	h.Write([]byte(scheduleID))
	return int(h.Sum32() % uint32(n))
}

// OccurrenceID is the id of the occurrence of schedule version version at
// scheduledFor. It is derived, never random, so the same firing gets the
// same id after a crash, a failover, a retry or a manual replay, and workers
// can deduplicate on it.
//
// It is "occ_", then scheduledFor as UTC unix seconds plus 2^39 in 8
// characters (40 bits), then the first 80 bits of the SHA-256 of a
// length-prefixed encoding of a type tag, the schedule id, the version and
// scheduledFor as UTC unix seconds, in 16 characters. Sub-second parts are
// not part of the id; stores refuse them.
//
// The time prefix makes ids sort by scheduled time, so the ids of one burst
// of firings are neighbours in an index rather than spread over all of it:
// a store's id index takes a burst as appends, not as random writes. The
// hash tells apart the firings of one second; two that collided would be
// refused by the id's unique index, never merged.
//
// The encoding is pinned by a test: changing it after a release would give
// every future firing a new id and break deduplication across an upgrade.
func OccurrenceID(scheduleID string, version int64, scheduledFor time.Time) string {
	// The hash input is built on the stack and hashed with Sum256, and the
	// id encoded into one array: the planner derives an id per firing, and
	// a hash.Hash plus its intermediate slices were a tenth of its
	// allocations.
	var buf [96]byte
	b := appendField(buf[:0], "occurrence")
	b = appendField(b, scheduleID)
	b = appendInt(b, version)
	sec := scheduledFor.Unix()
	b = appendInt(b, sec)
	sum := sha256.Sum256(b)
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(sec+1<<39)<<24) // 40 bits, left-aligned
	var id [4 + 8 + 16]byte
	copy(id[:], OccurrencePrefix)
	idEncoding.Encode(id[4:12], t[:5])
	idEncoding.Encode(id[12:], sum[:10])
	return string(id[:])
}

// ManualOccurrenceID is the id of the manual occurrence of a schedule
// triggered with key. It depends on the schedule and the key alone, not on
// the time of the trigger, so a retried trigger names the same occurrence.
//
// It is "occ_z", then the first 120 bits of the SHA-256 of a
// length-prefixed encoding of a type tag, the schedule id and the key, in
// 24 characters.
func ManualOccurrenceID(scheduleID, key string) string {
	var buf [160]byte
	b := appendField(buf[:0], "manual")
	b = appendField(b, scheduleID)
	b = appendField(b, key)
	sum := sha256.Sum256(b)
	var id [5 + 24]byte
	copy(id[:], manualPrefix)
	idEncoding.Encode(id[5:], sum[:15])
	return string(id[:])
}

// AttemptID is the id of attempt number attempt of an occurrence, derived
// like OccurrenceID, so a retried claim after an ambiguous commit names the
// same row.
func AttemptID(occurrenceID string, attempt int64) string {
	var buf [80]byte
	b := appendField(buf[:0], "attempt")
	b = appendField(b, occurrenceID)
	b = appendInt(b, attempt)
	sum := sha256.Sum256(b)
	var id [4 + 26]byte
	copy(id[:], AttemptPrefix)
	idEncoding.Encode(id[4:], sum[:16])
	return string(id[:])
}

// appendField appends s with a big-endian uint64 length prefix, so that no
// two different field sequences encode to the same bytes.
func appendField(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}

// appendInt appends v as a field of its 8 big-endian bytes.
func appendInt(b []byte, v int64) []byte {
	b = binary.BigEndian.AppendUint64(b, 8)
	return binary.BigEndian.AppendUint64(b, uint64(v))
}
