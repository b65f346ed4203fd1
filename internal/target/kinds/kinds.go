// Package kinds knows every kind of target: it reads a target's stored
// settings (a JSON object) into its kind's Config, checks them when they
// are given, hides what is secret in them when they are shown, and opens
// the kind's Sender for the relay. The daemon hands it to the engine
// (engine.TargetKinds); adding a kind is a case in each method here and a
// package of its own (docs/architecture.md, "Adding a target").
package kinds

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/target"
	"github.com/sched-dev/sched/internal/target/nats"
	"github.com/sched-dev/sched/internal/target/webhook"
)

// Options are the node's settings for every target it opens.
type Options struct {
	// WebhookAllow are the address ranges webhooks may reach despite the
	// guard against server-side request forgery (schedd --webhook-allow).
	WebhookAllow []netip.Prefix
	// WebhookResolver and WebhookDial replace the system's resolver and
	// dialer of webhooks (tests: a resolver and a dialer they control);
	// nil for the system's.
	WebhookResolver webhook.Resolver
	WebhookDial     func(ctx context.Context, network, address string) (net.Conn, error)
	// WebhookTLS is the webhooks' TLS client settings (a private CA's
	// roots); nil for the system's roots.
	WebhookTLS *tls.Config
	// Name is the client name a NATS connection announces.
	Name string
}

// Kinds implements engine.TargetKinds for every kind sched has.
type Kinds struct{ opts Options }

// New returns the kinds with the node's options.
func New(o Options) *Kinds { return &Kinds{opts: o} }

// The stored settings of each kind: what a caller gives as config.
type (
	natsSettings struct {
		Subject   string `json:"subject"`
		URL       string `json:"url,omitempty"`        // default nats://127.0.0.1:4222
		CredsFile string `json:"creds_file,omitempty"` // a path on schedd's host
	}
	webhookSettings struct {
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers,omitempty"`
		Timeout string            `json:"timeout,omitempty"` // a Go duration, default 10s
	}
)

// redacted stands for a header's value when a webhook's settings are shown.
const redacted = "(redacted)"

// decode reads a kind's settings strictly: an unknown field is an error
// naming it, so a typo is not silently dropped.
func decode(config []byte, v any) error {
	if len(bytes.TrimSpace(config)) == 0 {
		config = []byte("{}")
	}
	d := json.NewDecoder(bytes.NewReader(config))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			return schedule.Invalid("config", "unknown setting %s", f)
		}
		return schedule.Invalid("config", "not a JSON object of the kind's settings: %v", err)
	}
	if d.More() {
		return schedule.Invalid("config", "more than one JSON value")
	}
	return nil
}

// Check validates a target's settings and secret (engine.TargetKinds).
func (k *Kinds) Check(kind record.TargetKind, config []byte, secret string) ([]byte, string, error) {
	switch kind {
	case record.TargetNATS:
		var s natsSettings
		if err := decode(config, &s); err != nil {
			return nil, "", err
		}
		if secret != "" {
			return nil, "", schedule.Invalid("secret", "a nats target takes no secret: its credentials are a file on schedd's host (creds_file)")
		}
		if err := k.natsConfig(s).Validate(); err != nil {
			return nil, "", schedule.Invalid("config", "%v", err)
		}
		out, err := json.Marshal(s)
		return out, "", err
	case record.TargetWebhook:
		var s webhookSettings
		if err := decode(config, &s); err != nil {
			return nil, "", err
		}
		if secret == "" {
			var err error
			if secret, err = webhook.NewSecret(); err != nil {
				return nil, "", err
			}
		}
		cfg, err := k.webhookConfig(s, secret)
		if err != nil {
			return nil, "", err
		}
		if err := checkLiteralHost(cfg.URL, cfg.Allow); err != nil {
			return nil, "", err
		}
		snd, err := webhook.New(cfg) // validates; opens no connection
		if err != nil {
			return nil, "", schedule.Invalid("config", "%v", err)
		}
		snd.Close()
		for h, v := range s.Headers {
			if v == redacted {
				return nil, "", schedule.Invalid("config", "header %s: %q is how a stored value is shown; give the value itself", h, redacted)
			}
		}
		out, err := json.Marshal(s)
		return out, secret, err
	default:
		return nil, "", schedule.Invalid("kind", "%q: want nats or webhook", kind)
	}
}

// Redact returns a target's settings as they may be shown: a webhook's
// header values (an Authorization header, say) replaced by "(redacted)".
func (k *Kinds) Redact(kind record.TargetKind, config []byte) []byte {
	if kind != record.TargetWebhook {
		return config
	}
	var s webhookSettings
	if err := json.Unmarshal(config, &s); err != nil {
		return []byte("{}")
	}
	for h := range s.Headers {
		s.Headers[h] = redacted
	}
	out, err := json.Marshal(s)
	if err != nil {
		return []byte("{}")
	}
	return out
}

// Open returns the sender of a stored target (engine.TargetKinds).
func (k *Kinds) Open(t record.Target) (target.Sender, error) {
	switch t.Kind {
	case record.TargetNATS:
		var s natsSettings
		if err := json.Unmarshal(t.Config, &s); err != nil {
			return nil, fmt.Errorf("nats target %s: stored settings: %w", t.Name, err)
		}
		return nats.New(k.natsConfig(s))
	case record.TargetWebhook:
		var s webhookSettings
		if err := json.Unmarshal(t.Config, &s); err != nil {
			return nil, fmt.Errorf("webhook target %s: stored settings: %w", t.Name, err)
		}
		cfg, err := k.webhookConfig(s, t.Secret)
		if err != nil {
			return nil, err
		}
		return webhook.New(cfg)
	default:
		return nil, fmt.Errorf("target %s: kind %q is not one this node knows", t.Name, t.Kind)
	}
}

func (k *Kinds) natsConfig(s natsSettings) nats.Config {
	return nats.Config{URL: s.URL, Subject: s.Subject, CredsFile: s.CredsFile, Name: k.opts.Name}
}

func (k *Kinds) webhookConfig(s webhookSettings, secret string) (webhook.Config, error) {
	cfg := webhook.Config{URL: s.URL, Secret: secret, Headers: s.Headers, Allow: k.opts.WebhookAllow,
		Resolver: k.opts.WebhookResolver, DialContext: k.opts.WebhookDial, TLSConfig: k.opts.WebhookTLS}
	if s.Timeout != "" {
		d, err := time.ParseDuration(s.Timeout)
		if err != nil || d <= 0 || d > 5*time.Minute {
			return cfg, schedule.Invalid("config", "timeout %q: want a duration from 1ms to 5m, e.g. 10s", s.Timeout)
		}
		cfg.Timeout = d
	}
	return cfg, nil
}

// checkLiteralHost refuses, when a target is given, a webhook URL whose
// host is an IP address the guard would refuse at every delivery. A
// name is not resolved here (the guard checks it at each connection).
func checkLiteralHost(raw string, allow []netip.Prefix) error {
	u, err := url.Parse(raw)
	if err != nil {
		return nil // New names the URL's fault
	}
	a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]"))
	if err != nil {
		return nil
	}
	if err := webhook.Check(a, allow); err != nil {
		return schedule.Invalid("config", "url %q: %v", raw, err)
	}
	return nil
}
