package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/store"
)

// canary is in every payload the audit test writes: it must never reach
// an audit row.
const canary = "CANARY-audit-5b1e"

// auditWant is the one row a change must add (action empty: none).
type auditWant struct {
	tenant, action, target string
	oldVer, newVer         int64
}

// auditSince returns the rows after id, failing the test on error.
func (h *harness) auditSince(id int64) []store.AuditEntry {
	h.t.Helper()
	rows, err := h.e.Audit.List(h.ctx, AuditQuery{AfterID: id, Limit: store.MaxListLimit})
	if err != nil {
		h.t.Fatalf("audit: %v", err)
	}
	return rows
}

// TestAuditCompleteness performs every control-plane verb and every
// tenant and token verb once, as a named actor, and checks that each
// leaves exactly one audit row saying who, what and which versions; that
// a refused or empty change leaves none; and that no payload or token
// reaches a row.
func TestAuditCompleteness(t *testing.T) {
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		h := open(t, utc("2027-01-01T00:00:00Z"), nil)
		user := Actor{TenantID: tenant, Token: "ci"}
		admin := Actor{TenantID: record.DefaultTenant, Token: "ops", Admin: true}
		uctx, actx := WithActor(h.ctx, user), WithActor(h.ctx, admin)
		var tokens []string // every token minted, none of which may reach a row

		last := int64(0)
		if rows := h.auditSince(0); len(rows) > 0 {
			last = rows[len(rows)-1].ID // the default tenant of a new store
		}
		var sc *record.Schedule
		var occ *record.Occurrence
		dead := func() {
			t.Helper()
			if _, _, err := h.e.Control.Trigger(h.ctx, tenant, sc.ScheduleID, ""); err != nil {
				t.Fatalf("trigger: %v", err)
			}
			cs := h.claim("q", 1)
			if len(cs) != 1 {
				t.Fatalf("claim: %d claimed, want 1", len(cs))
			}
			if !strings.Contains(string(cs[0].Payload), canary) {
				t.Fatalf("payload %q lacks the canary", cs[0].Payload)
			}
			if _, err := h.e.Queue.Nack(h.ctx, tenant, cs[0].Occurrence.OccurrenceID, cs[0].Attempt.Attempt, Permanent, "boom"); err != nil {
				t.Fatalf("nack: %v", err)
			}
			occ = &cs[0].Occurrence
		}
		payload := func(n int) schedule.Settings {
			s := every("audited", "1m")
			s.Payload = []byte(fmt.Sprintf(`{"secret":%q,"n":%d}`, canary, n))
			return s
		}

		steps := []struct {
			name   string
			before func()
			do     func() error
			want   func() auditWant
		}{
			{name: "create", do: func() (err error) {
				sc, _, err = h.e.Control.Create(uctx, tenant, "key-1", payload(1))
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditScheduleCreate, sc.ScheduleID, 0, 1} }},
			{name: "create again with its key", do: func() error {
				_, created, err := h.e.Control.Create(uctx, tenant, "key-1", payload(1))
				if err == nil && created {
					err = fmt.Errorf("created again")
				}
				return err
			}},
			{name: "update", do: func() error {
				_, err := h.e.Control.Update(uctx, tenant, "audited", payload(2))
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditScheduleUpdate, sc.ScheduleID, 1, 2} }},
			{name: "update refused", do: func() error {
				bad := payload(3)
				bad.Expr = "every now and then"
				if _, err := h.e.Control.Update(uctx, tenant, "audited", bad); err == nil {
					return fmt.Errorf("a bad interval was accepted")
				}
				return nil
			}},
			{name: "pause", do: func() error { _, err := h.e.Control.Pause(uctx, tenant, sc.ScheduleID); return err },
				want: func() auditWant { return auditWant{tenant, AuditSchedulePause, sc.ScheduleID, 2, 3} }},
			{name: "pause a paused", do: func() error { _, err := h.e.Control.Pause(uctx, tenant, sc.ScheduleID); return err }},
			{name: "resume", do: func() error { _, err := h.e.Control.Resume(uctx, tenant, sc.ScheduleID); return err },
				want: func() auditWant { return auditWant{tenant, AuditScheduleResume, sc.ScheduleID, 3, 4} }},
			{name: "trigger", do: func() (err error) {
				occ, _, err = h.e.Control.Trigger(uctx, tenant, sc.ScheduleID, "by-hand")
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditScheduleTrigger, sc.ScheduleID, 0, 0} }},
			{name: "trigger again with its key", do: func() error {
				_, created, err := h.e.Control.Trigger(uctx, tenant, sc.ScheduleID, "by-hand")
				if err == nil && created {
					err = fmt.Errorf("triggered again")
				}
				return err
			}},
			{name: "replay", before: func() { h.claimAll(); dead() }, do: func() error {
				_, err := h.e.Queue.Replay(uctx, tenant, occ.OccurrenceID)
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditReplay, occ.OccurrenceID, 0, 0} }},
			{name: "replay refused", do: func() error {
				if _, err := h.e.Queue.Replay(uctx, tenant, occ.OccurrenceID); err == nil {
					return fmt.Errorf("an ENQUEUED occurrence was replayed")
				}
				return nil
			}},
			{name: "replay the dead-letter queue", before: func() { h.claimAll(); dead() }, do: func() error {
				ids, _, err := h.e.Queue.ReplayDead(uctx, DLQFilter{TenantID: tenant, ScheduleID: sc.ScheduleID}, 10)
				if err == nil && len(ids) != 1 {
					err = fmt.Errorf("replayed %v, want one", ids)
				}
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditDLQReplay, sc.ScheduleID, 0, 0} }},
			{name: "purge the dead-letter queue", before: func() { h.claimAll(); dead() }, do: func() error {
				n, _, err := h.e.Queue.PurgeDead(uctx, DLQFilter{TenantID: tenant}, 10)
				if err == nil && n != 1 {
					err = fmt.Errorf("purged %d, want 1", n)
				}
				return err
			}, want: func() auditWant { return auditWant{tenant, AuditDLQPurge, tenant, 0, 0} }},
			{name: "purge an empty dead-letter queue", do: func() error {
				_, _, err := h.e.Queue.PurgeDead(uctx, DLQFilter{TenantID: tenant}, 10)
				return err
			}},
			{name: "cancel", do: func() error { _, err := h.e.Control.Cancel(uctx, tenant, sc.ScheduleID); return err },
				want: func() auditWant { return auditWant{tenant, AuditScheduleCancel, sc.ScheduleID, 4, 5} }},
			{name: "update a canceled", do: func() error {
				if _, err := h.e.Control.Update(uctx, tenant, sc.ScheduleID, payload(4)); err == nil {
					return fmt.Errorf("a canceled schedule was updated")
				}
				return nil
			}},
			{name: "outage start", do: func() error { _, err := h.e.Outages.Start(uctx, time.Hour, nil); return err },
				want: func() auditWant { return auditWant{tenant, AuditOutageStart, "outage-1", 0, 0} }},
			{name: "outage refused", do: func() error {
				if _, err := h.e.Outages.Start(uctx, time.Hour, nil); err == nil {
					return fmt.Errorf("a second outage started")
				}
				return nil
			}},
			{name: "outage cancel", do: func() error { _, err := h.e.Outages.Cancel(uctx); return err },
				want: func() auditWant { return auditWant{tenant, AuditOutageCancel, "outage-1", 0, 0} }},
			{name: "tenant create", do: func() error {
				_, tok, err := h.e.Tenants.Create(actx, "acme", TenantPatch{Weight: new(2)})
				tokens = append(tokens, tok)
				return err
			}, want: func() auditWant { return auditWant{"acme", AuditTenantCreate, "acme", 0, 1} }},
			{name: "tenant create refused", do: func() error {
				if _, _, err := h.e.Tenants.Create(actx, "acme", TenantPatch{}); err == nil {
					return fmt.Errorf("acme was created twice")
				}
				return nil
			}},
			{name: "tenant update", do: func() error { _, err := h.e.Tenants.Update(actx, "acme", TenantPatch{Weight: new(3)}); return err },
				want: func() auditWant { return auditWant{"acme", AuditTenantUpdate, "acme", 1, 2} }},
			{name: "tenant update refused", do: func() error {
				if _, err := h.e.Tenants.Update(actx, "acme", TenantPatch{Weight: new(-1)}); err == nil {
					return fmt.Errorf("weight -1 was accepted")
				}
				return nil
			}},
			{name: "tenant disable", do: func() error { _, err := h.e.Tenants.SetEnabled(actx, "acme", false); return err },
				want: func() auditWant { return auditWant{"acme", AuditTenantDisable, "acme", 2, 3} }},
			{name: "tenant enable", do: func() error { _, err := h.e.Tenants.SetEnabled(actx, "acme", true); return err },
				want: func() auditWant { return auditWant{"acme", AuditTenantEnable, "acme", 3, 4} }},
			{name: "token create", do: func() error {
				tok, _, err := h.e.Tenants.CreateToken(actx, "acme", "deploy", "")
				tokens = append(tokens, tok)
				return err
			}, want: func() auditWant { return auditWant{"acme", AuditTokenCreate, "deploy", 0, 0} }},
			{name: "token create refused", do: func() error {
				if _, _, err := h.e.Tenants.CreateToken(actx, "acme", "deploy", ""); err == nil {
					return fmt.Errorf("a second live token deploy was made")
				}
				return nil
			}},
			{name: "token revoke", do: func() error { return h.e.Tenants.RevokeToken(actx, "acme", "deploy") },
				want: func() auditWant { return auditWant{"acme", AuditTokenRevoke, "deploy", 0, 0} }},
			{name: "token revoke refused", do: func() error {
				if err := h.e.Tenants.RevokeToken(actx, "acme", "deploy"); err == nil {
					return fmt.Errorf("a revoked token was revoked again")
				}
				return nil
			}},
			{name: "tenant delete", do: func() error { _, err := h.e.Tenants.Delete(actx, "acme"); return err },
				want: func() auditWant { return auditWant{"acme", AuditTenantDelete, "acme", 4, 5} }},
		}
		for _, st := range steps {
			if st.before != nil {
				st.before()
				all := h.auditSince(0) // the before's own rows (a trigger) are not the step's
				last = all[len(all)-1].ID
			}
			if err := st.do(); err != nil {
				t.Fatalf("%s: %v", st.name, err)
			}
			rows := h.auditSince(last)
			if st.want == nil {
				if len(rows) != 0 {
					t.Errorf("%s: %d audit rows, want none: %+v", st.name, len(rows), rows)
				}
				continue
			}
			w := st.want()
			if len(rows) != 1 {
				t.Fatalf("%s: %d audit rows, want one: %+v", st.name, len(rows), rows)
			}
			r := rows[0]
			last = r.ID
			by := user
			if strings.HasPrefix(w.action, "tenant.") || strings.HasPrefix(w.action, "token.") {
				by = admin
			}
			got := auditWant{r.TenantID, r.Action, r.Target, r.OldVersion, r.NewVersion}
			if got != w {
				t.Errorf("%s: row %+v, want %+v", st.name, got, w)
			}
			if r.ActorTenant != by.TenantID || r.ActorToken != by.Token || r.ActorAdmin != by.Admin || r.ActorLocal {
				t.Errorf("%s: actor %s/%s admin=%v local=%v, want %+v", st.name, r.ActorTenant, r.ActorToken, r.ActorAdmin, r.ActorLocal, by)
			}
			if !r.At.Equal(h.clk.Now().Truncate(time.Millisecond)) {
				t.Errorf("%s: at %v, want the engine's clock %v", st.name, r.At, h.clk.Now())
			}
			h.clk.Advance(time.Second)
		}

		// Nothing secret in any row.
		for _, r := range h.auditSince(0) {
			text := fmt.Sprintf("%+v", r)
			if strings.Contains(text, canary) {
				t.Errorf("audit row %d holds the payload's canary: %s", r.ID, text)
			}
			for _, tok := range tokens {
				if tok != "" && strings.Contains(text, tok) {
					t.Errorf("audit row %d holds a token: %s", r.ID, text)
				}
			}
		}

		// A local request over the socket: no token, local.
		local := WithActor(h.ctx, Actor{TenantID: record.DefaultTenant, Admin: true, Local: true})
		if _, _, err := h.e.Control.Create(local, record.DefaultTenant, "", every("local", "1m")); err != nil {
			t.Fatalf("create locally: %v", err)
		}
		rows := h.auditSince(last)
		if len(rows) != 1 || rows[0].ActorToken != "" || !rows[0].ActorLocal || !rows[0].ActorAdmin || rows[0].ActorTenant != record.DefaultTenant {
			t.Errorf("a local create: %+v; want one row by the local admin of %s", rows, record.DefaultTenant)
		}
	})
}

// claimAll claims and acks everything on queue q, so the next claim takes
// the occurrence a test makes.
func (h *harness) claimAll() {
	h.t.Helper()
	for _, c := range h.claim("q", 100) {
		if _, err := h.e.Queue.Ack(h.ctx, tenant, c.Occurrence.OccurrenceID, c.Attempt.Attempt); err != nil {
			h.t.Fatalf("ack: %v", err)
		}
	}
}

// TestAuditScheduleFilter reads one schedule's rows by its name and by its
// id, and another tenant's rows not at all.
func TestAuditScheduleFilter(t *testing.T) {
	h := newHarness(t, utc("2027-01-01T00:00:00Z"), nil)
	a := h.create(every("a", "1m"))
	h.create(every("b", "1m"))
	if _, _, err := h.e.Control.Create(h.ctx, "tenant-b", "", every("a", "1m")); err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := h.e.Control.Pause(h.ctx, tenant, "a"); err != nil {
		t.Fatalf("pause: %v", err)
	}
	for _, ref := range []string{"a", a.ScheduleID} {
		rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant, Schedule: ref})
		if err != nil {
			t.Fatalf("audit --schedule %s: %v", ref, err)
		}
		if len(rows) != 2 || rows[0].Action != AuditScheduleCreate || rows[1].Action != AuditSchedulePause || rows[1].Target != a.ScheduleID {
			t.Errorf("audit --schedule %s: %+v; want its create and pause", ref, rows)
		}
	}
	if _, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant, Schedule: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("audit --schedule nope: %v; want ErrNotFound", err)
	}
	rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: "tenant-b"})
	if err != nil || len(rows) != 1 || rows[0].TenantID != "tenant-b" {
		t.Errorf("tenant-b's rows: %+v, %v; want its one create", rows, err)
	}
}

// TestAuditRetention: a purge on the engine's clock deletes the rows older
// than the retention and keeps the newer ones; a negative retention keeps
// every row.
func TestAuditRetention(t *testing.T) {
	for _, tc := range []struct {
		name      string
		retention time.Duration
		kept      int // of the three creates, 10 days apart
	}{
		{"20 days", 20 * 24 * time.Hour, 2},
		{"default", 0, 3},
		{"forever", -1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, utc("2027-01-01T00:00:00Z"), func(c *Config) { c.AuditRetention = tc.retention })
			if _, err := h.e.Audit.Purge(h.ctx); err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if i > 0 {
					h.clk.Advance(10 * 24 * time.Hour)
				}
				h.create(every(fmt.Sprintf("s%d", i), "1h"))
			}
			h.clk.Advance(6 * 24 * time.Hour) // the creates are 26, 16 and 6 days old
			if _, err := h.e.Audit.Purge(context.WithoutCancel(h.ctx)); err != nil {
				t.Fatalf("purge: %v", err)
			}
			rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant})
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.kept {
				t.Fatalf("%d rows kept, want %d: %+v", len(rows), tc.kept, rows)
			}
			for _, r := range rows {
				if tc.retention > 0 && h.clk.Now().Sub(r.At) > tc.retention {
					t.Errorf("row of %v kept past the retention", r.At)
				}
			}
		})
	}
}

// TestAuditPurgeEvery: the background's purge (after a stats flush) runs
// at most every auditPurgeEvery of the engine's clock.
func TestAuditPurgeEvery(t *testing.T) {
	h := newHarness(t, utc("2027-01-01T00:00:00Z"), func(c *Config) { c.AuditRetention = time.Hour })
	old := func() {
		t.Helper()
		err := store.InTx(h.ctx, h.st, func(tx store.Tx) error {
			return tx.AppendAudit(h.ctx, store.AuditEntry{At: h.clk.Now().Add(-2 * time.Hour), TenantID: tenant, Action: AuditScheduleCreate, Target: "sch_old"})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		t.Helper()
		rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant})
		if err != nil {
			t.Fatal(err)
		}
		return len(rows)
	}
	old()
	h.e.Audit.maybePurge(h.ctx) // the first: due
	if n := count(); n != 0 {
		t.Fatalf("after the first purge: %d old rows left", n)
	}
	old()
	h.clk.Advance(auditPurgeEvery - time.Second)
	h.e.Audit.maybePurge(h.ctx)
	if n := count(); n != 1 {
		t.Errorf("a purge sooner than %s after the last: %d rows, want the old one kept", auditPurgeEvery, n)
	}
	h.clk.Advance(time.Second)
	h.e.Audit.maybePurge(h.ctx)
	if n := count(); n != 0 {
		t.Errorf("a purge %s after the last: %d old rows left", auditPurgeEvery, n)
	}
}

// TestAuditAtomic: when the audit row cannot be written, the change it
// records is not written either. PostgreSQL refuses a NUL in text, so an
// actor whose token name holds one makes the append fail inside the
// change's transaction.
func TestAuditAtomic(t *testing.T) {
	h := newPGHarness(t, utc("2027-01-01T00:00:00Z"), nil)
	bad := WithActor(h.ctx, Actor{TenantID: tenant, Token: "bad\x00name"})
	if _, _, err := h.e.Control.Create(bad, tenant, "", every("atomic", "1m")); err == nil {
		t.Fatal("a create whose audit row failed succeeded")
	}
	if _, err := h.e.Control.Get(h.ctx, tenant, "atomic"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the schedule was stored without its audit row: %v", err)
	}
	sc := h.create(every("kept", "1m"))
	if _, err := h.e.Control.Pause(bad, tenant, sc.ScheduleID); err == nil {
		t.Fatal("a pause whose audit row failed succeeded")
	}
	if got := h.schedule(sc.ScheduleID); got.Version != 1 || got.State != record.ScheduleActive {
		t.Errorf("after the failed pause: version %d %s; want 1 ACTIVE", got.Version, got.State)
	}
	if _, _, err := h.e.Tenants.Create(bad, "acme", TenantPatch{}); err == nil {
		t.Fatal("a tenant create whose audit row failed succeeded")
	}
	if _, err := h.e.Tenants.Get(h.ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the tenant was stored without its audit row: %v", err)
	}
}

// TestHistoryOfACanceledName: once a schedule is canceled its name still
// finds it (Get, the audit filter) until a new schedule takes the name;
// verbs that need a live schedule refuse it by its state; an update's
// audit entry says which settings changed, from what to what, and names a
// changed payload without showing it.
func TestHistoryOfACanceledName(t *testing.T) {
	t.Parallel()
	onEveryStore(t, func(t *testing.T, open harnessMaker) {
		t.Parallel()
		h := open(t, utc("2027-01-01T00:00:00Z"), nil)
		req := cronIn("nightly", "0 2 * * *", "UTC")
		req.Payload = []byte(`{"password":"hunter2"}`)
		first := h.create(req)
		upd := cronIn("nightly", "30 2 * * *", "UTC")
		upd.Payload = []byte(`{"password":"correct horse"}`)
		upd.Retry.MaxAttempts = 3
		if _, err := h.e.Control.Update(h.ctx, tenant, "nightly", upd); err != nil {
			t.Fatalf("update: %v", err)
		}
		if _, err := h.e.Control.Cancel(h.ctx, tenant, "nightly"); err != nil {
			t.Fatalf("cancel: %v", err)
		}

		sc, err := h.e.Control.Get(h.ctx, tenant, "nightly")
		if err != nil || sc.ScheduleID != first.ScheduleID || sc.State != record.ScheduleCanceled {
			t.Fatalf("get nightly after its cancel: %+v %v; want it, CANCELED", sc, err)
		}
		if _, err := h.e.Control.Pause(h.ctx, tenant, "nightly"); !errors.Is(err, ErrConflict) {
			t.Errorf("pause of the canceled nightly: %v; want a conflict naming its state", err)
		}
		rows, err := h.e.Audit.List(h.ctx, AuditQuery{TenantID: tenant, Schedule: "nightly"})
		if err != nil || len(rows) != 3 {
			t.Fatalf("audit --schedule nightly: %+v %v; want create, update and cancel", rows, err)
		}
		d := rows[1].Detail
		for _, want := range []string{`changed cron "0 2 * * *" -> "30 2 * * *"`, "max_attempts 10 -> 3", "payload (22 bytes -> 28 bytes)"} {
			if !strings.Contains(d, want) {
				t.Errorf("update's detail %q lacks %q", d, want)
			}
		}
		for _, r := range rows {
			if strings.Contains(r.Detail, "hunter2") || strings.Contains(r.Detail, "horse") {
				t.Errorf("%s's detail shows the payload: %q", r.Action, r.Detail)
			}
		}
		if d := rows[2].Detail; !strings.Contains(d, "changed state ACTIVE -> CANCELED") {
			t.Errorf("cancel's detail %q does not say the state changed", d)
		}

		// A new schedule takes the name: it is the one found.
		again := h.create(cronIn("nightly", "0 3 * * *", "UTC"))
		if sc, err := h.e.Control.Get(h.ctx, tenant, "nightly"); err != nil || sc.ScheduleID != again.ScheduleID {
			t.Errorf("get nightly after a new one took the name: %+v %v", sc, err)
		}
	})
}
