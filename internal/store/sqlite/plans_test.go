package sqlite

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/store/storetest"
)

// TestQueryPlans pins the plan of every statement on a hot path or meant
// for a partial index (queries.go): a partial index is used only when the
// query repeats its WHERE term, and a batch statement must be driven by its
// JSON rows, one key lookup each, never by a scan of the table it updates.
func TestQueryPlans(t *testing.T) {
	t.Parallel()
	s, _ := openTest(t)
	// A query of one schedule's occurrences finds the schedule's row by
	// its id first (rowOfSchedule1).
	const rowOfID = "SEARCH schedules USING COVERING INDEX sqlite_autoindex_schedules_1 (schedule_id=?)"
	// A listing of the audit log with since starts after the last row
	// stamped before the seek.
	const auditSeek = "SEARCH audit_log USING COVERING INDEX audit_log_at (at<?)"
	for _, tc := range []struct {
		name  string
		query string
		want  []string // substrings of the plan, in order
		never []string // substrings the plan must not have
	}{
		// The overlap's facts come from the schedule's open occurrences
		// alone.
		// The rest of the position's millisecond by rowid, then the later
		// ones: never a walk over the rows before the position.
		{"claim candidates", qClaimCandidates,
			[]string{"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
				"SEARCH s USING INTEGER PRIMARY KEY (rowid=?)",
				"SEARCH r USING INDEX occurrences_open (schedule_row=?)", "SEARCH p USING INDEX occurrences_open (schedule_row=?)",
				"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>"},
			[]string{"TEMP B-TREE", "SCAN occurrences"}},
		{"skip overlap", qSkipOverlap, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN occurrences"}},
		{"claim rows", qClaimRows, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN occurrences"}},
		{"next available", qNextAvailable,
			[]string{"SEARCH h USING PRIMARY KEY (tenant_id=? AND queue=?)", "occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
				"occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>?)"},
			[]string{"SCAN"}},
		{"running quota", qCountRunning, []string{"COVERING INDEX occurrences_running (tenant_id=?)"}, []string{"SCAN occurrences"}},
		{"heartbeat", qHeartbeat, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN occurrences", "occurrences_running"}},
		{"retry budget", qCountRetryWait, []string{"COVERING INDEX occurrences_retry_wait (tenant_id=?)"}, []string{"SCAN occurrences"}},
		{"dead-letter count", qCountDead, []string{"COVERING INDEX occurrences_dead (tenant_id=?)"}, []string{"SCAN occurrences"}},
		{"enqueued count", qCountEnqueued, []string{"occurrences_claim (tenant_id=?)"}, []string{"SCAN occurrences"}},
		{"dead-letter list", qListDeadOccurrences, []string{"occurrences_dead (tenant_id=? AND scheduled_for>?)"}, []string{"TEMP B-TREE", "SCAN occurrences"}},
		{"dead-letter list (newest first)", qListDeadOccurrencesDesc, []string{"occurrences_dead (tenant_id=? AND scheduled_for<?)"}, []string{"TEMP B-TREE", "SCAN occurrences"}},
		// One schedule's occurrences come in index order by time; only
		// the rows of one second are sorted by id (the LAST TERM), a second
		// at a time, so a page stops at its limit.
		{"schedule's occurrences", qListScheduleOccurrences,
			[]string{"sqlite_autoindex_occurrences_2 (schedule_row=? AND scheduled_for>?)", rowOfID, "USE TEMP B-TREE FOR LAST TERM OF ORDER BY"}, []string{"SCAN"}},
		{"schedule's occurrences (newest first)", qListScheduleOccurrencesDesc,
			[]string{"sqlite_autoindex_occurrences_2 (schedule_row=? AND scheduled_for<?)", rowOfID, "USE TEMP B-TREE FOR LAST TERM OF ORDER BY"}, []string{"SCAN"}},
		// A tenant's occurrences walk occurrences_tenant_time, which is in
		// the listing's order (ids included): a page stops at its limit,
		// and nothing is sorted.
		{"tenant's occurrences", qListTenantOccurrences,
			[]string{"SEARCH occurrences USING INDEX occurrences_tenant_time (tenant_id=? AND scheduled_for>?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"tenant's occurrences (newest first)", qListTenantOccurrencesDesc,
			[]string{"SEARCH occurrences USING INDEX occurrences_tenant_time (tenant_id=? AND scheduled_for<?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"dead to purge", qDeadOccurrences, []string{"occurrences_dead (tenant_id=?)"}, []string{"TEMP B-TREE", "SCAN occurrences"}},
		{"purge dead", qCancelDead, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN occurrences"}},
		{"cancel on update", qCancelPending, []string{"occurrences_open (schedule_row=?)", rowOfID}, []string{"SCAN"}},
		{"in flight on update", qCountRunningOlder, []string{"occurrences_open (schedule_row=?)", rowOfID}, []string{"SCAN"}},
		// The schedule is found by tenant and id; then its open
		// occurrences alone, never the natural key's index (its history).
		{"first undelivered", qFirstUndelivered, []string{"occurrences_open (schedule_row=?)", "sqlite_autoindex_schedules_2 (tenant_id=? AND schedule_id=?)"},
			[]string{"SCAN", "sqlite_autoindex_occurrences"}},
		{"last kept", qLastKept, []string{"sqlite_autoindex_occurrences_2 (schedule_row=?)", rowOfID}, []string{"TEMP B-TREE", "SCAN"}},
		{"due schedules", qDueSchedules, []string{"schedules_due (shard=? AND (next_run_at,schedule_id)>(?,?) AND next_run_at<?)", "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"advance cursors", qAdvanceCursors, []string{"SEARCH schedule_cursors USING INTEGER PRIMARY KEY (rowid=?)"},
			[]string{"schedules_due", "SCAN schedule_cursors"}},
		{"advance cursors (brief)", qAdvanceCursorsBrief, []string{"SEARCH schedule_cursors USING INTEGER PRIMARY KEY (rowid=?)"},
			[]string{"schedules_due", "SCAN schedule_cursors"}},
		{"advance schedules (state)", qAdvanceSchedulesState, []string{"SEARCH schedules USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH schedule_cursors USING INTEGER PRIMARY KEY (rowid=?)"},
			[]string{"schedules_due", "SCAN schedules", "SCAN schedule_cursors"}},
		{"missed count", qAddMissed, []string{"SEARCH schedules USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN schedules"}},
		{"schedule", qGetSchedule, []string{"sqlite_autoindex_schedules_2 (tenant_id=? AND schedule_id=?)", "SEARCH c USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN"}},
		{"schedule rows", qScheduleRows, []string{"SEARCH schedules USING COVERING INDEX sqlite_autoindex_schedules_1 (schedule_id=?)"},
			[]string{"SCAN schedules"}},
		{"finish", qFinishGroup, []string{"SEARCH occurrences USING INDEX sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN occurrences"}},
		{"finish (by row)", qFinishGroupByRow, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN occurrences"}},
		{"finish (count)", qFinishGroupCount, []string{"SEARCH occurrences USING INDEX sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN occurrences"}},
		{"finished attempt", qFinishedAttempt, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)", "SEARCH attempts USING PRIMARY KEY (occurrence_id=? AND attempt=?)"}, []string{"SCAN"}},
		{"archive attempts", qArchiveAttempts, []string{"SCAN j", "SEARCH o USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN o"}},
		{"end expired", qEndExpired, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN occurrences"}},
		{"nack facts", qNackFacts, []string{"SEARCH s USING INTEGER PRIMARY KEY (rowid=?)", "sqlite_autoindex_occurrences_1 (occurrence_id=?)", "occurrences_retry_wait (tenant_id=?)"}, []string{"SCAN"}},
		{"expired leases", qExpiredAttempts, []string{"occurrences_lease (lease_expires_at<?)", "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"list attempts", qListAttempts, []string{"SEARCH attempts USING PRIMARY KEY (occurrence_id=? AND attempt>?)"}, []string{"TEMP B-TREE", "SCAN"}},
		// The audit log is walked in id order from the page's key or the
		// seek (one search of audit_log_at), never by time.
		{"audit", qListAudit, []string{"SEARCH audit_log USING INTEGER PRIMARY KEY (rowid>?)", auditSeek}, []string{"TEMP B-TREE", "SCAN"}},
		{"audit of a tenant", qListAuditTenant,
			[]string{"SEARCH audit_log USING INDEX audit_log_tenant (tenant_id=? AND audit_id>?)", auditSeek}, []string{"TEMP B-TREE", "SCAN"}},
		{"audit of a target", qListAuditTarget,
			[]string{"SEARCH audit_log USING INDEX audit_log_target (target=? AND rowid>?)", auditSeek}, []string{"TEMP B-TREE", "SCAN"}},
		{"audit by a range of targets", qListAuditTargetRange,
			[]string{"SEARCH audit_log USING INDEX audit_log_target (target>? AND target<?)"}, []string{"SCAN"}},
		// The version rows and the first versions held in schedules rows,
		// each walked in key order and merged: never a sort.
		{"versions", qListVersions, []string{"MERGE (UNION ALL)", "SEARCH schedule_versions USING PRIMARY KEY ((schedule_id,version)>(?,?))",
			"SEARCH schedules USING INDEX sqlite_autoindex_schedules_1 (schedule_id>?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"versions of a schedule", qListScheduleVersions, []string{"MERGE (UNION ALL)", "SEARCH schedule_versions USING PRIMARY KEY (schedule_id=? AND version>?)",
			"SEARCH schedules USING INDEX sqlite_autoindex_schedules_1 (schedule_id=?)"}, []string{"TEMP B-TREE", "SCAN"}},
		// The live name, then the canceled one changed last, both by index
		// and in its order (the one-row subquery is all that is scanned).
		{"schedule by name", qGetScheduleByName, []string{"schedules_name (tenant_id=? AND name=?)", "schedules_canceled_name (tenant_id=? AND name=?)"},
			[]string{"SCAN schedules", "TEMP B-TREE"}},
		{"schedules by names or keys", qSchedulesByNamesOrKeys,
			[]string{"schedules_name (tenant_id=? AND name=?)", "schedules_idempotency_key (tenant_id=? AND idempotency_key=?)"}, []string{"SCAN schedules"}},
		{"schedule by key", qGetScheduleByIdempotencyKey, []string{"schedules_idempotency_key (tenant_id=? AND idempotency_key=?)"}, []string{"SCAN"}},
		{"list schedules", qListSchedules, []string{"sqlite_autoindex_schedules_2 (tenant_id=? AND schedule_id>?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"heartbeat", qHeartbeat, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)", "SEARCH s USING INTEGER PRIMARY KEY (rowid=?)"}, []string{"SCAN"}},
		{"current attempt", qCurrentAttempt, []string{"sqlite_autoindex_occurrences_1 (occurrence_id=?)"}, []string{"SCAN"}},
		// The snapshot reads the partial indexes whole (they hold the
		// queue as it stands), never the table.
		{"snapshot: depth", qSnapshotDepth, []string{"SCAN occurrences USING INDEX occurrences_open", "SCAN occurrences USING INDEX occurrences_dead"},
			[]string{"SCAN occurrences$", "SCAN occurrences USING INDEX sqlite_autoindex"}},
		// The oldest ready one: per lane (lane_heads), its first ready
		// occurrence after the head.
		{"snapshot: oldest ready", qSnapshotOldestReady, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)", "SCAN h",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>? AND available_at<?)"},
			[]string{"SCAN occurrences", "SCAN o", "SCAN c"}},
		// Each queue's: the same two seeks per lane, each once (the
		// statement names them once), the lanes in key order.
		{"snapshot: queues' oldest ready", qSnapshotQueueOldestReady, []string{"SCAN h",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>? AND available_at<?)"},
			[]string{"SCAN occurrences", "SCAN o", "TEMP B-TREE"}},
		{"snapshot: due occurrences", qSnapshotDueOccurrences, []string{"SCAN occurrences USING INDEX occurrences_open"},
			[]string{"SCAN occurrences$", "SCAN occurrences USING INDEX sqlite_autoindex"}},
		{"snapshot: due schedules", qSnapshotDueCursors, []string{"SEARCH schedule_cursors USING COVERING INDEX schedules_due",
			"SEARCH c USING COVERING INDEX schedules_due (shard>?)", "SEARCH c USING COVERING INDEX schedules_due (shard=? AND next_run_at>? AND next_run_at<?)"},
			[]string{"SCAN c", "SCAN schedule_cursors"}},
		// A tenant's snapshot reads the tenant's range of indexes that lead
		// with it, never another tenant's rows nor the whole of an index.
		{"tenant snapshot: depth", qSnapshotTenantDepth, []string{"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=?)",
			"SEARCH occurrences USING INDEX occurrences_running (tenant_id=?)", "SEARCH occurrences USING INDEX occurrences_scheduled (tenant_id=?)",
			"SEARCH occurrences USING INDEX occurrences_dead (tenant_id=?)"},
			[]string{"SCAN"}},
		{"tenant snapshot: oldest ready", qSnapshotTenantOldestReady, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)",
			"SEARCH h USING PRIMARY KEY (tenant_id=?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>? AND available_at<?)"}, []string{"SCAN"}},
		{"tenant snapshot: queues' oldest ready", qSnapshotTenantQueueOldestReady, []string{"SEARCH h USING PRIMARY KEY (tenant_id=?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
			"SEARCH o USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>? AND available_at<?)"},
			[]string{"SCAN", "TEMP B-TREE"}},
		{"tenant snapshot: due occurrences", qSnapshotTenantDueOccurrences, []string{"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=?)",
			"SEARCH occurrences USING INDEX occurrences_scheduled (tenant_id=?)"}, []string{"SCAN occurrences"}},
		{"tenant snapshot: due schedules", qSnapshotTenantDueCursors, []string{"SEARCH t USING PRIMARY KEY (tenant_id=?)",
			"SEARCH c USING INDEX schedules_due (shard=? AND next_run_at>? AND next_run_at<?)"}, []string{"SCAN"}},
		// Leased runs: each a range of one index, or a seek.
		{"fold range", qFoldRange, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)",
			"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>? AND rowid<?)",
			"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)",
			"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at>? AND available_at<?)",
			"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid<?)"},
			[]string{"SCAN occurrences"}},
		{"fold archived", qFoldArchived, []string{"SEARCH occurrences USING INTEGER PRIMARY KEY (rowid=?)",
			"SEARCH occurrences USING INDEX occurrences_claim (tenant_id=? AND queue=? AND lane=? AND available_at=? AND rowid>?)"},
			[]string{"SCAN occurrences"}},
		{"run holding", qRunHolding, []string{"SEARCH runs USING INDEX runs_lane (tenant_id=? AND queue=? AND lane=? AND (last_at,last_row)>(?,?))"}, []string{"SCAN runs"}},
		{"schedule runs", qScheduleRuns, []string{"occurrences_open (schedule_row=?)", "runs_lane (tenant_id=? AND queue=? AND lane=? AND last_at>?)"}, []string{"SCAN o", "SCAN r"}},
		{"expired runs", qRunsExpired, []string{"SEARCH runs USING INDEX runs_lease (lease_expires_at<?)"}, []string{"SCAN"}},
		{"stat minutes: read", qReadStatMinutes, []string{"sqlite_autoindex_stat_minutes_1 (minute>?)"}, []string{"TEMP B-TREE", "SCAN"}},
		{"stat minutes: delete", qDeleteStatMinutes, []string{"sqlite_autoindex_stat_minutes_1 (minute<?)"}, []string{"SCAN"}},
	} {
		args := make([]any, 14)
		for i := range args {
			args[i] = "[]"
		}
		rows, err := s.r.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+tc.query, args...)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		storetest.PlanHasInOrder(t, tc.name, text, tc.want)
		for _, n := range tc.never {
			for _, line := range plan {
				// A never that ends in $ is a whole line (a scan of the
				// table itself, where a scan of a partial index is meant).
				found := strings.Contains(line, n)
				if whole, ok := strings.CutSuffix(n, "$"); ok {
					found = line == whole
				}
				if found && !strings.Contains(line, "json_each") && line != "SCAN CONSTANT ROW" {
					t.Errorf("%s: plan has %q:\n%s", tc.name, n, text)
				}
			}
		}
	}
}

// TestColumnLists: the column lists, their placeholders and their scanners
// agree in length.
func TestColumnLists(t *testing.T) {
	t.Parallel()
	count := func(cols string) int { return strings.Count(cols, ",") + 1 }
	var raw rawOccurrence
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"occurrence columns", count(occurrenceColumns), occurrenceArity},
		{"occurrence scan", len(raw.dest()), occurrenceArity},
		{"claim columns", count(occurrenceClaimColumns), occurrenceClaimArity},
		{"claim scan", len(raw.appendClaimDest(nil)), occurrenceClaimArity},
		{"occurrence insert columns", count(occurrenceInsertColumns), occurrenceInsertArity},
		{"occurrence insert placeholders", strings.Count(occurrenceInsertParams, "?"), occurrenceInsertArity},
		{"occurrence args", len(occurrenceArgs(nil, &record.Occurrence{}, "", 0, 0, time.Time{})), occurrenceInsertArity},
		{"chunk columns", count(occurrenceChunkColumns), chunkShared + chunkRowArity},
		{"chunk shared args", len((&chunkShape{}).args(nil)), chunkShared},
		{"chunk row args", len(chunkRowArgs(nil, &pendingRow{o: &record.Occurrence{}}, &boxedRow{})), chunkRowArity},
		{"multi-row placeholders", strings.Count(qInsertOccurrences, "?"), (chunkShared + chunkRowArity) * insertChunk},
		{"schedule placeholders", strings.Count(qInsertSchedule, "?"), count(scheduleColumns)},
		{"schedule args", len(scheduleArgs(&record.Schedule{})), count(scheduleColumns)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, tc.got, tc.want)
		}
	}
	names := func(cols string) []string {
		var out []string
		for _, c := range strings.Split(cols, ",") {
			out = append(out, strings.TrimSpace(c))
		}
		slices.Sort(out)
		return out
	}
	// The multi-row insert leaves the columns only a manual or dead
	// occurrence has to their default (shapeOf keeps such rows out).
	oneRow := slices.DeleteFunc(names(occurrenceInsertColumns), func(c string) bool { return c == "trigger_key" || c == "dead_reason" })
	if got := names(occurrenceChunkColumns); !slices.Equal(got, oneRow) {
		t.Errorf("chunk columns %v, want those of an insert but trigger_key and dead_reason, %v", got, oneRow)
	}
}
