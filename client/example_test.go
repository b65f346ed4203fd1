package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sched-dev/sched/api"
	"github.com/sched-dev/sched/client"
)

func ExampleNew() {
	// "" is the socket schedd listens on by default; tcp:HOST:PORT and
	// https://HOST:PORT reach a daemon elsewhere.
	c, err := client.New(os.Getenv("SCHED_ADDR"), os.Getenv("SCHED_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := c.CreateSchedule(ctx, api.ScheduleRequest{
		Name: "nightly-report", Queue: "reports",
		Cron: "0 2 * * *", TimeZone: "Europe/Berlin",
		Payload:        json.RawMessage(`{"format":"pdf"}`),
		IdempotencyKey: "nightly-report-v1", // safe to retry
	})
	switch {
	case client.IsConflict(err):
		log.Fatal("the name is taken: ", err)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.ScheduleID, res.NextRunAt)
}

func ExampleWorker() {
	c, err := client.New("", os.Getenv("SCHED_TOKEN"))
	if err != nil {
		log.Fatal(err)
	}
	w := &client.Worker{
		Client:      c,
		Queue:       "reports",
		Concurrency: 4,
		Lease:       time.Minute,
		Logger:      slog.Default(),
		Handler: func(ctx context.Context, job *client.Job) error {
			var p struct{ Format string }
			if err := json.Unmarshal(job.Payload, &p); err != nil {
				// Retrying cannot fix a bad payload: to the dead-letter queue.
				return client.Permanent(err)
			}
			// Delivery is at least once: make the work idempotent on
			// job.OccurrenceID. ctx ends when the schedule is superseded or
			// canceled, or the lease is lost (context.Cause says which).
			// Any other error is retried later, under the same id.
			return makeReport(ctx, job.OccurrenceID, p.Format) // nil: ack
		},
	}
	// SIGTERM drains: no more claims, running handlers finish.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := w.Run(ctx); err != nil {
		log.Fatal(err)
	}
}

func makeReport(ctx context.Context, id, format string) error { return nil }
