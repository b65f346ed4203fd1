package kinds

import (
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
)

// TestCheck: a target's settings are refused with an error naming what is
// wrong, never the secret or a header's value; accepted ones come back as
// stored, with a secret made for a webhook that gave none.
func TestCheck(t *testing.T) {
	k := New(Options{WebhookAllow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	for _, tc := range []struct {
		name   string
		kind   record.TargetKind
		config string
		secret string
		field  string // the setting the error names; "" when accepted
		says   string
	}{
		{"nats", record.TargetNATS, `{"subject":"orders.fire"}`, "", "", ""},
		{"nats with a url", record.TargetNATS, `{"subject":"orders.fire","url":"nats://127.0.0.1:4222"}`, "", "", ""},
		{"nats wildcard", record.TargetNATS, `{"subject":"orders.*"}`, "", "config", "orders.*"},
		{"nats no subject", record.TargetNATS, `{}`, "", "config", "ubject"},
		{"nats secret", record.TargetNATS, `{"subject":"a"}`, "whsec_c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0", "secret", "creds_file"},
		{"unknown setting", record.TargetNATS, `{"subjct":"a"}`, "", "config", `"subjct"`},
		{"not an object", record.TargetWebhook, `[1]`, "", "config", "JSON object"},
		{"webhook", record.TargetWebhook, `{"url":"https://hooks.example/x"}`, "", "", ""},
		{"webhook ftp", record.TargetWebhook, `{"url":"ftp://hooks.example/x"}`, "", "config", "ftp"},
		{"webhook metadata", record.TargetWebhook, `{"url":"http://169.254.169.254/latest"}`, "", "config", "169.254.169.254"},
		{"webhook loopback allowed", record.TargetWebhook, `{"url":"http://127.0.0.1:8085/x"}`, "", "", ""},
		{"webhook loopback not allowed", record.TargetWebhook, `{"url":"http://127.0.0.2:8085/x"}`, "", "config", "127.0.0.2"},
		{"webhook timeout", record.TargetWebhook, `{"url":"https://h.example/","timeout":"1h"}`, "", "config", "timeout"},
		{"webhook bad secret", record.TargetWebhook, `{"url":"https://h.example/"}`, "whsec_!!!!", "config", "secret"},
		{"webhook redacted header", record.TargetWebhook, `{"url":"https://h.example/","headers":{"Authorization":"(redacted)"}}`, "", "config", "(redacted)"},
		{"kind", "kafka", `{}`, "", "kind", "kafka"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, secret, err := k.Check(tc.kind, []byte(tc.config), tc.secret)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				if !json.Valid(cfg) {
					t.Errorf("stored settings %s are not JSON", cfg)
				}
				if tc.kind == record.TargetWebhook && !strings.HasPrefix(secret, "whsec_") {
					t.Errorf("secret %q; want one made", secret)
				}
				return
			}
			var ve *schedule.ValidationError
			if !errors.As(err, &ve) || ve.Field != tc.field || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Check: %v; want an error on %s saying %q", err, tc.field, tc.says)
			}
			if tc.secret != "" && strings.Contains(err.Error(), tc.secret) {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
}

// TestRedact: a webhook's header values are hidden when its settings are
// shown; the rest stays.
func TestRedact(t *testing.T) {
	k := New(Options{})
	got := string(k.Redact(record.TargetWebhook, []byte(`{"url":"https://h.example/","headers":{"Authorization":"Bearer t0ken"}}`)))
	if strings.Contains(got, "t0ken") || !strings.Contains(got, `"Authorization":"(redacted)"`) || !strings.Contains(got, "h.example") {
		t.Errorf("Redact = %s", got)
	}
	nats := `{"subject":"a.b"}`
	if got := string(k.Redact(record.TargetNATS, []byte(nats))); got != nats {
		t.Errorf("Redact of a nats target = %s; want it as it is", got)
	}
}
