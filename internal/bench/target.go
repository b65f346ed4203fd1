package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	natsio "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

// benchTarget is the name of the target every tenant of a run with
// --target creates.
const benchTarget = "bench"

// natsTarget is a burst delivered into a NATS JetStream stream instead of
// the built-in queue (--target nats://HOST:PORT/SUBJECT). The bench makes
// a file-backed stream of its own for the subject, lets schedd's relay
// publish into it, and reads the firings back from the stream once they
// are all there: each message's time is when the stream stored it, so the
// lag is measured at the queue, with no consumer competing for the
// machine during the burst.
type natsTarget struct {
	url, subject, stream string
	nc                   *natsio.Conn
	js                   jetstream.JetStream
	s                    jetstream.Stream
}

// parseTarget reads --target: nats://HOST:PORT/SUBJECT.
func parseTarget(raw string) (*natsTarget, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "nats" || u.Host == "" {
		return nil, fmt.Errorf("--target %q: want nats://HOST:PORT/SUBJECT", raw)
	}
	subject := strings.TrimPrefix(u.Path, "/")
	if subject == "" || strings.ContainsAny(subject, "*> /") {
		return nil, fmt.Errorf("--target %q: the path must be one subject without wildcards, as in nats://127.0.0.1:4222/bench.fire", raw)
	}
	return &natsTarget{url: "nats://" + u.Host, subject: subject,
		stream: fmt.Sprintf("sched_bench_%d", time.Now().UnixNano())}, nil
}

// open connects and makes the run's stream: file storage, a duplicate
// window of two minutes (a republished firing is dropped), no limits.
func (t *natsTarget) open(ctx context.Context) error {
	var err error
	if t.nc, err = natsio.Connect(t.url, natsio.Name("schedctl bench")); err != nil {
		return fmt.Errorf("--target: connect to %s: %w", t.url, err)
	}
	if t.js, err = jetstream.New(t.nc); err != nil {
		return err
	}
	if name, err := t.js.StreamNameBySubject(ctx, t.subject); err == nil {
		return fmt.Errorf("--target: stream %s already takes subject %q; name a subject no stream takes", name, t.subject)
	}
	t.s, err = t.js.CreateStream(ctx, jetstream.StreamConfig{Name: t.stream, Subjects: []string{t.subject},
		Storage: jetstream.FileStorage, Duplicates: 2 * time.Minute})
	if err != nil {
		return fmt.Errorf("--target: create stream %s: %w", t.stream, err)
	}
	return nil
}

// create makes the target each tenant's schedules name.
func (t *natsTarget) create(ctx context.Context, c *client.Client) error {
	cfg := fmt.Appendf(nil, `{"subject":%q,"url":%q}`, t.subject, t.url)
	if _, err := c.CreateTarget(ctx, api.TargetRequest{Name: benchTarget, Kind: "nats", Config: cfg}); err != nil {
		return fmt.Errorf("create target: %w", err)
	}
	return nil
}

// wait polls the stream until it holds total messages or ctx ends, and
// reports whether it got them all.
func (t *natsTarget) wait(ctx context.Context, total int) bool {
	for {
		info, err := t.s.Info(ctx)
		if err == nil && info.State.Msgs >= uint64(total) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// read returns every message of the stream as a delivery, received when
// the stream stored it.
func (t *natsTarget) read(ctx context.Context) ([]*delivery, error) {
	info, err := t.s.Info(ctx)
	if err != nil {
		return nil, err
	}
	n := int(info.State.Msgs)
	c, err := t.s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, err
	}
	out := make([]*delivery, 0, n)
	for len(out) < n {
		batch, err := c.Fetch(min(n-len(out), 10_000), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return out, err
		}
		got := 0
		for m := range batch.Messages() {
			got++
			meta, err := m.Metadata()
			if err != nil {
				return out, err
			}
			h := m.Headers()
			at, err := time.Parse(time.RFC3339Nano, h.Get("Sched-Scheduled-For"))
			if err != nil {
				return out, fmt.Errorf("message %d: Sched-Scheduled-For: %w", meta.Sequence.Stream, err)
			}
			var attempt int64
			fmt.Sscan(h.Get("Sched-Attempt"), &attempt)
			out = append(out, &delivery{occID: h.Get(natsio.MsgIdHdr), schedID: h.Get("Sched-Schedule-Id"),
				tenant: h.Get("Sched-Tenant"), scheduledFor: at.UTC(), attempt: attempt,
				received: meta.Timestamp, leaseExpires: meta.Timestamp, acked: meta.Timestamp})
		}
		if err := batch.Error(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return out, err
		}
		if got == 0 {
			return out, fmt.Errorf("the stream gave %d of its %d messages", len(out), n)
		}
	}
	return out, nil
}

// close deletes the stream unless keep, and disconnects.
func (t *natsTarget) close(keep bool) error {
	if t.nc == nil {
		return nil
	}
	defer t.nc.Close()
	if keep || t.s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return t.js.DeleteStream(ctx, t.stream)
}
