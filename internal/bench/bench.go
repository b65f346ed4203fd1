// Package bench is schedctl bench: an end-to-end benchmark of the real
// binaries. It starts the real schedd on a fresh store, loads schedules
// through the API, runs consumers through the API (package client) that
// claim in batches and acknowledge each batch inside the next claim, and
// measures on the consumer's side when each firing arrives, against when
// it was due. It talks to schedd only through packages client and api;
// the PostgreSQL schema of a run is dropped and measured with psql, so
// that schedctl links no database driver.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// Modes of a run.
const (
	Burst     = "burst"
	Sustained = "sustained"
	Scale     = "scale"
)

// estimatedCreatesPerSecond is the loader's expected pace through the
// batch route, from which the default lead before the first firing is
// reckoned: a little under what it measured on this project's 2-core
// machine on SQLite.
const estimatedCreatesPerSecond = 3000

// Config is one run.
type Config struct {
	Mode      string
	Store     string // "sqlite" or a postgres:// DSN
	Schedd    string // the schedd binary; "" to look for it (FindSchedd)
	Keep      bool   // keep the run's directory and PostgreSQL schema
	Consumers int
	Batch     int           // claim batch size
	Lease     time.Duration // claim lease
	Tenants   int

	Schedules  int           // burst and scale: schedules to load
	CreateLead time.Duration // burst: the due instant's distance from the start; 0: estimated
	FlexWindow time.Duration // burst: the schedules' flexible window; 0: strict
	Timeout    time.Duration // how long after the last due instant to wait for missing firings

	Profile    string        // a file for schedd's CPU profile from the first due instant on; "": none
	ProfileFor time.Duration // how long the profile records

	Rate     int           // sustained: firings per second
	Duration time.Duration // sustained: how long

	Burst int // scale: the burst after the load

	// Target delivers the firings into a NATS JetStream subject through
	// schedd's relay instead of the built-in queue
	// (nats://HOST:PORT/SUBJECT); "" for the queue.
	Target string
}

// Check validates a config before anything starts.
func (c Config) Check() error {
	switch {
	case c.Mode != Burst && c.Mode != Sustained && c.Mode != Scale:
		return fmt.Errorf("mode %q: want burst, sustained or scale", c.Mode)
	case c.Consumers < 1:
		return errors.New("--consumers: at least 1")
	case c.Batch < 1 || c.Batch > 1000:
		return errors.New("--batch: from 1 to 1000")
	case c.Lease < time.Second:
		return errors.New("--lease: at least 1s")
	case c.Tenants < 1:
		return errors.New("--tenants: at least 1")
	case c.Timeout <= 0:
		return errors.New("--timeout: must be positive")
	case c.CreateLead < 0:
		return errors.New("--create-lead: must not be negative")
	case c.FlexWindow < 0 || c.FlexWindow%time.Second != 0:
		return errors.New("--flex-window: whole seconds, not negative")
	case c.Mode == Burst && c.Schedules < 1, c.Mode == Scale && c.Schedules < 0:
		return errors.New("--schedules: at least 1")
	case c.Mode == Sustained && (c.Rate < 1 || c.Duration < time.Second):
		return errors.New("--rate: at least 1, --duration: at least 1s")
	case c.Mode == Scale && c.Burst < 0:
		return errors.New("--burst: not negative")
	case c.Target != "" && c.Mode != Burst:
		return errors.New("--target: burst only")
	}
	if c.Target != "" {
		if _, err := parseTarget(c.Target); err != nil {
			return err
		}
	}
	return nil
}

// Result is what a run measured. Its JSON names are a contract.
type Result struct {
	Mode      string `json:"mode"`
	Store     string `json:"store"`
	Schedules int    `json:"schedules"` // schedules loaded
	Tenants   int    `json:"tenants"`
	// Claims says how the consumers claimed: "tenant" (one tenant's
	// queue) or "pool" (all_tenants, by an admin).
	Claims string `json:"claims"`
	// Target is the NATS subject the firings went to (--target), where
	// delivery_lag_ms is measured: when the stream stored each one.
	Target    string `json:"target,omitempty"`
	Consumers int    `json:"consumers"`
	Batch     int    `json:"batch"`

	// DueAt is the first instant firings fall due (burst: all of them).
	DueAt    time.Time `json:"due_at"`
	Expected int       `json:"expected"` // firings due in the measured window
	// Delivered counts distinct expected occurrences received.
	Delivered int `json:"delivered"`
	Missing   int `json:"missing"`
	// Duplicates counts occurrence ids received more than once;
	// ConcurrentDuplicates those received again while an earlier delivery
	// was neither acknowledged nor past its lease.
	Duplicates           int `json:"duplicates"`
	ConcurrentDuplicates int `json:"concurrent_duplicates"`
	// UnknownSchedule counts deliveries of schedules the bench did not
	// create: an error.
	UnknownSchedule int `json:"unknown_schedule"`
	// OutsideWindow counts deliveries of the bench's schedules firing
	// outside the measured window (an every schedule's firing before it).
	OutsideWindow int `json:"outside_window"`

	DeliveryLag    Lag     `json:"delivery_lag_ms"`
	ScheduleLag    Lag     `json:"schedule_lag_ms"`
	DeliveriesPerS float64 `json:"deliveries_per_s"`
	TargetP99Ms    float64 `json:"target_p99_ms,omitempty"`

	PeakRSSMB    float64 `json:"schedd_peak_rss_mb"`
	SampledRSSMB float64 `json:"schedd_sampled_rss_max_mb"`
	StoreBytes   int64   `json:"store_bytes"`
	LoadS        float64 `json:"load_s"`
	CreatesPerS  float64 `json:"creates_per_s"`

	Timeline []Second    `json:"timeline"`
	Flex     *FlexSpread `json:"flex,omitempty"`

	Rate      int     `json:"rate,omitempty"`
	DurationS float64 `json:"duration_s,omitempty"`

	Scale   *ScaleFigures `json:"scale,omitempty"`
	Planner *PlannerCost  `json:"planner,omitempty"`

	TimedOut bool     `json:"timed_out"`
	Warnings []string `json:"warnings"`
	Errors   []string `json:"errors"`
}

// ScaleFigures are scale's load figures, before its burst.
type ScaleFigures struct {
	LoadRSSMaxMB    float64 `json:"load_rss_max_mb"`   // sampled VmRSS during the load
	AfterLoadRSSMB  float64 `json:"after_load_rss_mb"` // VmRSS when the load ended
	AfterLoadBytes  int64   `json:"after_load_store_bytes"`
	Burst           int     `json:"burst"`
	BurstLoadS      float64 `json:"burst_load_s"`
	BurstCreatesPer float64 `json:"burst_creates_per_s"`
	// PlannerAfterLoad is the planner's work from the end of the load to
	// the end of the run.
	PlannerAfterLoad *PlannerWindow `json:"planner_after_load,omitempty"`
}

// Failed reports whether the run lost firings, delivered one to two
// consumers at once, or delivered a schedule it did not create. Timing is
// never a failure.
func (r *Result) Failed() bool {
	return r.Missing > 0 || r.ConcurrentDuplicates > 0 || r.UnknownSchedule > 0
}

// runner is one run's state.
type runner struct {
	cfg     Config
	d       *daemon
	st      *store
	admin   *client.Client
	tenants []*client.Client // the clients that create schedules, one per tenant
	res     *Result
	log     io.Writer
	// afterLoad is the planner's figures when scale's load ended.
	afterLoad *PlannerCost
	target    *natsTarget // --target; nil for the built-in queue
}

// Run runs one benchmark and returns what it measured; an error means the
// run could not be carried out (schedd not found or not starting, a
// create refused).
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Result, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	bin, err := FindSchedd(cfg.Schedd)
	if err != nil {
		return nil, err
	}
	// Short: the socket's path must fit in about 100 bytes.
	dir, err := os.MkdirTemp("", "schedbench")
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	st, err := newStore(cfg.Store, dir)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := &runner{cfg: cfg, st: st, log: progress,
		res: &Result{Mode: cfg.Mode, Store: st.kind, Tenants: cfg.Tenants, Consumers: cfg.Consumers, Batch: cfg.Batch,
			Warnings: []string{}, Errors: []string{}, Timeline: []Second{}}}
	r.d, r.admin, err = startDaemon(ctx, bin, dir, st)
	defer func() {
		if r.d != nil {
			r.d.terminate()
		}
		if cfg.Keep {
			r.logf("kept the run's directory %s (schedd.log there)%s", dir, map[bool]string{true: " and schema " + st.schema}[st.kind == "postgres"])
			return
		}
		if err := st.drop(context.Background()); err != nil {
			r.logf("%v", err)
		}
		os.RemoveAll(dir)
	}()
	if err != nil {
		return nil, err
	}
	if err := r.setupTenants(ctx); err != nil {
		return nil, err
	}
	if cfg.Target != "" {
		r.target, _ = parseTarget(cfg.Target)
		defer func() {
			if err := r.target.close(cfg.Keep); err != nil {
				r.logf("delete stream %s: %v", r.target.stream, err)
			}
		}()
		if err := r.target.open(ctx); err != nil {
			return nil, err
		}
		r.res.Target = cfg.Target
		for _, c := range r.tenants {
			if err := r.target.create(ctx, c); err != nil {
				return nil, err
			}
		}
		r.logf("firings go to stream %s (subject %s) through schedd's relay", r.target.stream, r.target.subject)
	}
	switch cfg.Mode {
	case Burst:
		err = r.burst(ctx, cfg.Schedules)
	case Sustained:
		err = r.sustained(ctx)
	case Scale:
		err = r.scale(ctx)
	}
	if err != nil {
		return nil, err
	}
	r.finish(ctx)
	return r.res, nil
}

func (r *runner) logf(format string, args ...any) {
	if r.log != nil {
		fmt.Fprintf(r.log, "bench: "+format+"\n", args...)
	}
}

// setupTenants makes the clients that create schedules: the local admin
// (the default tenant) for one tenant; else one tenant each, created
// through the admin API, with its own token, whose work the consumers
// take with a pool claim.
func (r *runner) setupTenants(ctx context.Context) error {
	if r.cfg.Tenants == 1 {
		r.tenants, r.res.Claims = []*client.Client{r.admin}, "tenant"
		return nil
	}
	r.res.Claims = "pool"
	for i := range r.cfg.Tenants {
		tc, err := r.admin.CreateTenant(ctx, api.TenantRequest{Name: fmt.Sprintf("bench-%d", i+1)})
		if err != nil {
			return fmt.Errorf("create tenant: %w", err)
		}
		c, err := client.New("unix:"+r.d.sock, tc.Token, client.WithVersion("schedctl-bench"))
		if err != nil {
			return err
		}
		r.tenants = append(r.tenants, c)
	}
	return nil
}

// lead is how far ahead of now the first firing goes: the flag, else a
// minute plus the load's estimated time.
func (r *runner) lead(n int) time.Duration {
	if r.cfg.CreateLead > 0 {
		return r.cfg.CreateLead
	}
	return time.Minute + time.Duration(n)*time.Second/estimatedCreatesPerSecond
}

// spreadTenants assigns the requests to the tenants, in contiguous blocks.
func (r *runner) spreadTenants(reqs []api.ScheduleRequest) []create {
	return r.spreadTenantsOf(reqs, 0, len(reqs))
}

// spreadTenantsOf assigns reqs, the schedules first.. of a load of total,
// to the tenants in contiguous blocks of the load, so that each request
// of the loader carries one tenant's schedules.
func (r *runner) spreadTenantsOf(reqs []api.ScheduleRequest, first, total int) []create {
	out := make([]create, len(reqs))
	for i, q := range reqs {
		out[i] = create{c: r.tenants[(first+i)*len(r.tenants)/total], req: q}
	}
	return out
}

// scaleChunk is how many of scale's schedules are made and sent at a
// time: the bench's own memory stays that of one chunk, whatever N.
const scaleChunk = 200_000

// loaded is a load's answers and its timing.
type loaded struct {
	reqs    []create
	answers []*api.CreateResult
	took    time.Duration
	ended   time.Time
}

func (r *runner) loadAll(ctx context.Context, reqs []create) (*loaded, error) {
	r.logf("loading %d schedules", len(reqs))
	began := time.Now()
	answers, err := load(ctx, reqs)
	if err != nil {
		return nil, err
	}
	l := &loaded{reqs: reqs, answers: answers, ended: time.Now()}
	l.took = l.ended.Sub(began)
	r.logf("loaded %d schedules in %.1fs", len(reqs), l.took.Seconds())
	return l, nil
}

func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return round2(float64(n) / d.Seconds())
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// burst loads n schedules firing at one whole minute and measures their
// delivery.
func (r *runner) burst(ctx context.Context, n int) error {
	due := time.Now().Add(r.lead(n)).Truncate(time.Minute).Add(time.Minute).UTC()
	reqs, err := dailyAt("b", n, due, r.cfg.FlexWindow)
	if err != nil {
		return err
	}
	if r.target != nil {
		for i := range reqs {
			reqs[i].Queue, reqs[i].Target = "", benchTarget
		}
	}
	r.logf("%d schedules due at %s", n, due.Format(time.RFC3339))
	l, err := r.loadAll(ctx, r.spreadTenants(reqs))
	if err != nil {
		return err
	}
	if r.res.Scale == nil {
		r.res.Schedules, r.res.LoadS, r.res.CreatesPerS = n, round2(l.took.Seconds()), perSecond(n, l.took)
	} else {
		r.res.Scale.BurstLoadS, r.res.Scale.BurstCreatesPer = round2(l.took.Seconds()), perSecond(n, l.took)
	}
	return r.measure(ctx, l, due, due, due.Add(r.cfg.FlexWindow))
}

// sustained loads rate "every 1m" schedules per second of the run (up to a
// minute's worth, which then repeat) and measures their delivery.
func (r *runner) sustained(ctx context.Context) error {
	n := r.cfg.Rate * int(min(r.cfg.Duration, time.Minute)/time.Second)
	lead := r.cfg.CreateLead
	if lead == 0 {
		lead = 10*time.Second + time.Duration(n)*time.Second/estimatedCreatesPerSecond
	}
	start := time.Now().Add(lead).Truncate(time.Second).Add(time.Second).UTC()
	reqs := everyMinute(r.cfg.Rate, start, r.cfg.Duration)
	r.res.Rate, r.res.DurationS, r.res.TargetP99Ms = r.cfg.Rate, r.cfg.Duration.Seconds(), 1000
	r.logf("%d schedules, %d firings/s from %s for %s", len(reqs), r.cfg.Rate, start.Format(time.RFC3339), r.cfg.Duration)
	l, err := r.loadAll(ctx, r.spreadTenants(reqs))
	if err != nil {
		return err
	}
	r.res.Schedules, r.res.LoadS, r.res.CreatesPerS = len(reqs), round2(l.took.Seconds()), perSecond(len(reqs), l.took)
	return r.measure(ctx, l, start, start, start.Add(r.cfg.Duration-time.Nanosecond))
}

// scale loads schedules that do not fire during the run, measuring the
// load, then measures a burst on top of them.
func (r *runner) scale(ctx context.Context) error {
	away := time.Now().Add(6 * time.Hour).Truncate(time.Minute)
	n := r.cfg.Schedules
	r.d.resetRSSMax()
	r.logf("loading %d schedules, %d at a time", n, scaleChunk)
	began := time.Now()
	for first := 0; first < n; first += scaleChunk {
		reqs, err := dailyAtFrom("n", first, min(scaleChunk, n-first), away, 0)
		if err != nil {
			return err
		}
		if _, err := load(ctx, r.spreadTenantsOf(reqs, first, n)); err != nil {
			return err
		}
		if done := first + len(reqs); done%(10*scaleChunk) == 0 || done == n {
			r.logf("loaded %d in %.1fs", done, time.Since(began).Seconds())
		}
	}
	took := time.Since(began)
	sf := &ScaleFigures{LoadRSSMaxMB: round2(r.d.resetRSSMax()), Burst: r.cfg.Burst}
	rss, _ := procStatus(r.d.cmd.Process.Pid, "VmRSS")
	sf.AfterLoadRSSMB = round2(mb(rss))
	var err error
	if sf.AfterLoadBytes, err = r.st.bytes(ctx); err != nil {
		r.res.Warnings = append(r.res.Warnings, err.Error())
	}
	r.res.Scale = sf
	r.afterLoad = r.planner(ctx)
	r.res.Schedules, r.res.LoadS, r.res.CreatesPerS = n, round2(took.Seconds()), perSecond(n, took)
	if r.cfg.Burst == 0 {
		return nil
	}
	return r.burst(ctx, r.cfg.Burst)
}

// measure runs the consumers until every firing due in [from, to] of the
// loaded schedules has arrived, or the timeout after to, and computes the
// figures. due is the instant the timeline counts from.
func (r *runner) measure(ctx context.Context, l *loaded, due, from, to time.Time) error {
	expected := map[string]int{}
	total := 0
	for i, a := range l.answers {
		n := expectedIn(l.reqs[i].req, &a.Schedule, from, to)
		expected[a.ScheduleID] = n
		total += n
	}
	r.res.DueAt, r.res.Expected = due, total
	if total < len(l.answers) && r.cfg.Mode != Sustained {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%d of %d schedules do not fire at %s (a daylight-saving repeat?)", len(l.answers)-total, len(l.answers), due.Format(time.RFC3339)))
	}
	if l.ended.After(from.Add(-10 * time.Second)) {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("loading ended %s before the first firing, less than 10s: raise --create-lead", from.Sub(l.ended).Round(time.Millisecond)))
	}
	if r.target != nil {
		return r.measureTarget(ctx, expected, total, due, from, to)
	}
	cs := &consumers{c: r.admin, queue: queue, batch: r.cfg.Batch, lease: r.cfg.Lease, pool: r.res.Claims == "pool",
		inWant: func(d *delivery) bool {
			return expected[d.schedID] > 0 && !d.scheduledFor.Before(from) && !d.scheduledFor.After(to)
		}}
	deadline := to.Add(r.cfg.Timeout)
	cctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	profiled := r.profile(ctx, from)
	defer func() {
		if err := <-profiled; err != nil {
			r.res.Warnings = append(r.res.Warnings, err.Error())
		}
	}()
	finished := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		cs.run(cctx, r.cfg.Consumers, func(got int64) bool { return got >= int64(total) }, finished)
		close(stopped)
	}()
	if total == 0 {
		close(finished)
	}
	select {
	case <-finished:
	case <-cctx.Done():
		r.res.TimedOut = ctx.Err() == nil
	}
	cancel()
	<-stopped
	r.res.Errors = append(r.res.Errors, cs.errs...)
	if cs.ackRefused > 0 {
		r.res.Errors = append(r.res.Errors, fmt.Sprintf("%d acks refused", cs.ackRefused))
	}
	var avail map[string]time.Time
	if r.cfg.FlexWindow > 0 {
		var err error
		if avail, err = r.availableAt(ctx); err != nil {
			r.res.Warnings = append(r.res.Warnings, err.Error())
		}
	}
	r.figures(cs.all, expected, from, to, due, avail)
	return ctx.Err()
}

// measureTarget waits until the stream holds every firing due in [from,
// to], or the timeout after to, then reads them back from it and computes
// the figures, the lag being when the stream stored each one.
func (r *runner) measureTarget(ctx context.Context, expected map[string]int, total int, due, from, to time.Time) error {
	profiled := r.profile(ctx, from)
	defer func() {
		if err := <-profiled; err != nil {
			r.res.Warnings = append(r.res.Warnings, err.Error())
		}
	}()
	wctx, cancel := context.WithDeadline(ctx, to.Add(r.cfg.Timeout))
	all := r.target.wait(wctx, total)
	cancel()
	r.res.TimedOut = !all && ctx.Err() == nil
	ds, err := r.target.read(ctx)
	if err != nil {
		r.res.Errors = append(r.res.Errors, fmt.Sprintf("read the stream: %v", err))
	}
	r.figures(ds, expected, from, to, due, nil)
	return ctx.Err()
}

// profile records schedd's CPU profile into cfg.Profile for
// cfg.ProfileFor from the instant from on, and sends its outcome (nil
// without a profile to take).
func (r *runner) profile(ctx context.Context, from time.Time) <-chan error {
	done := make(chan error, 1)
	if r.cfg.Profile == "" {
		done <- nil
		return done
	}
	go func() {
		select {
		case <-time.After(time.Until(from)):
		case <-ctx.Done():
			done <- nil
			return
		}
		f, err := os.Create(r.cfg.Profile)
		if err == nil {
			err = r.admin.CPUProfile(ctx, max(r.cfg.ProfileFor, time.Second), f)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			err = fmt.Errorf("profile: %w", err)
		} else {
			r.logf("wrote schedd's CPU profile to %s", r.cfg.Profile)
		}
		done <- err
	}()
	return done
}

// availableAt reads every bench occurrence's available_at (a flexible
// firing's slot in its window), tenant by tenant.
func (r *runner) availableAt(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, c := range r.tenants {
		o := client.ListOccurrencesOptions{Queue: queue, Limit: 1000}
		for {
			page, err := c.ListOccurrences(ctx, o)
			if err != nil {
				return out, fmt.Errorf("list occurrences: %w", err)
			}
			for _, oc := range page.Occurrences {
				out[oc.OccurrenceID] = oc.AvailableAt
			}
			if page.NextPage == "" || len(page.Occurrences) == 0 {
				break
			}
			o.Page = page.NextPage
		}
	}
	return out, nil
}

// figures computes the result from every delivery.
func (r *runner) figures(all []*delivery, expected map[string]int, from, to, due time.Time, avail map[string]time.Time) {
	res := r.res
	byOcc := map[string][]*delivery{}
	for _, d := range all {
		byOcc[d.occID] = append(byOcc[d.occID], d)
	}
	got := map[string]int{}
	var dlag, slag, offsets []time.Duration
	var recv []time.Time
	var firstDue, lastRecv time.Time
	unknownAvail := 0
	for _, ds := range byOcc {
		sort.Slice(ds, func(i, j int) bool { return ds[i].received.Before(ds[j].received) })
		if len(ds) > 1 {
			res.Duplicates++
			for i := 1; i < len(ds); i++ {
				p := ds[i-1]
				if (p.acked.IsZero() || ds[i].received.Before(p.acked)) && ds[i].received.Before(p.leaseExpires) {
					res.ConcurrentDuplicates++
					break
				}
			}
		}
		d := ds[0]
		if _, ok := expected[d.schedID]; !ok {
			res.UnknownSchedule++
			continue
		}
		if d.scheduledFor.Before(from) || d.scheduledFor.After(to) {
			res.OutsideWindow++
			continue
		}
		got[d.schedID]++
		avAt := d.scheduledFor
		if r.cfg.FlexWindow > 0 {
			if a, ok := avail[d.occID]; ok {
				avAt = a
				offsets = append(offsets, a.Sub(due))
			} else {
				unknownAvail++
			}
		}
		dlag = append(dlag, d.received.Sub(avAt))
		slag = append(slag, d.received.Sub(d.scheduledFor))
		recv = append(recv, d.received)
		if firstDue.IsZero() || avAt.Before(firstDue) {
			firstDue = avAt
		}
		if d.received.After(lastRecv) {
			lastRecv = d.received
		}
	}
	for id, n := range expected {
		res.Delivered += min(n, got[id])
		res.Missing += max(0, n-got[id])
	}
	res.DeliveryLag, res.ScheduleLag = lagOf(dlag), lagOf(slag)
	if len(recv) > 0 {
		res.DeliveriesPerS = perSecond(len(recv), lastRecv.Sub(firstDue))
		res.Timeline = timeline(due, recv)
	}
	if r.cfg.FlexWindow > 0 {
		res.Flex = spread(r.cfg.FlexWindow, offsets, unknownAvail)
	}
}

// finish reads what is measured at the end: schedd's memory, the
// store's size and the planner's pass cost.
func (r *runner) finish(ctx context.Context) {
	r.res.SampledRSSMB = round2(r.d.sampledMaxMB())
	hwm, _ := procStatus(r.d.cmd.Process.Pid, "VmHWM")
	// VmHWM is updated lazily, so a sample may pass it slightly.
	r.res.PeakRSSMB = round2(max(mb(hwm), r.res.SampledRSSMB))
	if r.res.Scale != nil {
		r.res.SampledRSSMB = round2(max(r.res.SampledRSSMB, r.res.Scale.LoadRSSMaxMB))
	}
	n, err := r.st.bytes(ctx)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, err.Error())
	}
	r.res.StoreBytes = n
	r.res.Planner = r.planner(ctx)
	if r.res.Scale != nil {
		r.res.Scale.PlannerAfterLoad = plannerWindow(r.afterLoad, r.res.Planner)
	}
}

// planner scrapes schedd's planner figures (nil, with a warning, if it
// cannot).
func (r *runner) planner(ctx context.Context) *PlannerCost {
	text, err := r.admin.Metrics(ctx)
	if err != nil {
		r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("metrics: %v", err))
		return nil
	}
	return plannerCost(text)
}
