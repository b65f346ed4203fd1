package engine

import (
	"sync"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store"
)

// hintSpan is how long claims of a lane may go on from where the claims
// before them stopped (laneHints) before one reads the lane from its
// start again.
const hintSpan = time.Second

// laneHints remembers, on this node, where the last claim of each lane of
// a tenant's queue stopped: the position in the lane's claim order
// (available_at, then insertion) up to which every candidate it read was
// claimed or skipped. The next claim of the lane reads on from there
// instead of from the lane's start.
//
// Why: on PostgreSQL a claimed row leaves its entry in the claim index
// until vacuum comes (an update writes a new row version and the old
// version's index entries stay), so during a burst every claim that read
// from the lane's start walked past every row claimed before it, and past
// the rows concurrent claims held locked: a quarter of a second per claim
// of 1,000 once 50,000 had gone. Reading on from the hint skips both. The
// hint is set when a claim reads, before it commits, so that concurrent
// claims of one node read disjoint rows at once.
//
// Nothing depends on the hint for correctness: a claim still takes only
// rows it reads as claimable. It can pass over claimable rows that lie
// before it: those of a claim that rolled back, and a row that became
// claimable with an earlier available_at than rows already claimed (a
// firing the planner wrote late). Two rules bound that delay: a claim
// that finds the lane empty from the hint on reads it again from its
// start, and every hintSpan a claim reads from the start regardless. A
// claim that withholds some candidates (a simulated outage) neither uses
// nor sets hints, and a hint stops before the first candidate a claim
// left waiting (overlap), so no left candidate is passed over.
type laneHints struct {
	mu sync.Mutex
	m  map[laneKey]laneHint
}

type laneKey struct {
	tenant, queue string
	lane          record.Lane
}

type laneHint struct {
	after store.CandidatePos
	since time.Time // when the chain of claims reading on from hints began with a read from the start
}

// get returns where a claim at now reads lane k from, and since, when the
// chain it continues began; ok is false when it reads from the lane's
// start. A nil laneHints has no hints.
func (h *laneHints) get(k laneKey, now time.Time) (after store.CandidatePos, since time.Time, ok bool) {
	if h == nil {
		return store.CandidatePos{}, now, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.m[k]
	if !ok || !v.after.Set || now.Sub(v.since) >= hintSpan || now.Before(v.since) {
		return store.CandidatePos{}, now, false
	}
	return v.after, v.since, true
}

// set records where the next claim of lane k reads on from (an unset
// after: from the start). Hints older than hintSpan are dropped on the
// way, so the map holds only the lanes claimed within the last second.
func (h *laneHints) set(k laneKey, after store.CandidatePos, since, now time.Time) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[laneKey]laneHint{}
	}
	if len(h.m) > 64 {
		for key, v := range h.m {
			if now.Sub(v.since) >= hintSpan {
				delete(h.m, key)
			}
		}
	}
	if !after.Set {
		delete(h.m, k)
		return
	}
	h.m[k] = laneHint{after: after, since: since}
}

// takenPrefix is how many of cands, from the first, were claimed or
// skipped (claim and skip hold pointers into cands, in cands' order, as
// decideOverlap appends them).
func takenPrefix(cands []store.ClaimCandidate, claim, skip []*store.ClaimCandidate) int {
	ci, si := 0, 0
	for i := range cands {
		switch {
		case ci < len(claim) && claim[ci] == &cands[i]:
			ci++
		case si < len(skip) && skip[si] == &cands[i]:
			si++
		default:
			return i
		}
	}
	return len(cands)
}
