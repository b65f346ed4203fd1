package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sched-dev/sched/internal/engine"
	"github.com/sched-dev/sched/internal/paths"
	"github.com/sched-dev/sched/internal/record"
	"github.com/sched-dev/sched/internal/schedule"
	"github.com/sched-dev/sched/internal/server"
	"github.com/sched-dev/sched/internal/version"
)

// Config is schedd's configuration, from flags and the environment.
type Config struct {
	// StorePath is the SQLite database file (empty with PostgresDSN).
	StorePath string
	// PostgresDSN is the PostgreSQL store's connection string (a
	// postgres:// URL, without sched's own schema parameter), and
	// PostgresSchema the schema to use, created if missing (the URL's
	// schema=NAME parameter; empty: the connection's search_path,
	// normally public).
	PostgresDSN    string
	PostgresSchema string
	// DefaultStore is set when StorePath is the zero-config default, whose
	// directory schedd creates.
	DefaultStore bool
	Listen       []Listen
	NodeID       string
	Shards       int
	Horizon      time.Duration
	// ShardLease is how long a shard lease lasts without renewal: the
	// longest a dead node keeps its shards.
	ShardLease time.Duration
	// Token, when set, is required on every /v1 request.
	Token     string
	LogFormat string // text | json
	// LogLevel is the least severe level logged (--log-level; the zero
	// value is info).
	LogLevel       slog.Level
	InsecureListen bool
	// MaxWaitingClaims caps the claims with a wait (long polls) served
	// at once (server.Config.MaxWaitingClaims).
	MaxWaitingClaims int
	// MaxConnections caps the connections open at once on each
	// listener; more are closed as soon as they are accepted.
	MaxConnections int
	// MaxConnectionsPerClient caps one client's share of each TCP
	// listener's connections (a client as server.ClientOf counts it);
	// 0: a tenth of MaxConnections (connectionShare).
	MaxConnectionsPerClient int
	// AuthFailureRate is each client address's budget of failed
	// authentications per second (server.Config.AuthFailureRate; 0: the
	// server's default).
	AuthFailureRate float64
	// TLSCert and TLSKey are the PEM files of the TCP listeners'
	// certificate (chain) and key: set, every TCP listener serves TLS
	// (Unix sockets stay plain). Both or neither. The files are read
	// again on SIGHUP and when they change (tls.go).
	TLSCert, TLSKey string
	// TLSClientCA, when set (with TLSCert), is a PEM bundle of the CAs
	// whose client certificates the TCP listeners require (mutual TLS).
	TLSClientCA string
	// APIRate and APIBurst are each tenant's quota of API requests per
	// second on this node and its burst (server.Config.APIRate, APIBurst;
	// 0: the server's defaults).
	APIRate  float64
	APIBurst int
	// MaxWaitingClaimsPerTenant caps one tenant's claims with a wait
	// (server.Config.MaxWaitingClaimsPerTenant); 0: a quarter of
	// MaxWaitingClaims.
	MaxWaitingClaimsPerTenant int
	// AuditRetention is how long the audit log keeps a row; 0 keeps
	// every row forever.
	AuditRetention time.Duration
	// Quotas are the tenants' default quotas (engine.Config.TenantDefaults).
	Quotas record.Quotas
	// Retention is how long finished history is kept for a tenant that
	// sets none of its own (retention.go); 0 keeps it forever.
	Retention time.Duration
	// WebhookAllow are the address ranges webhook targets may reach
	// despite the guard against request forgery (loopback, private and
	// link-local addresses are refused otherwise).
	WebhookAllow []netip.Prefix
	// SocketGroup, when set (--socket-group), is the group whose members
	// are served on the unix:PATH sockets as schedd's own user is
	// (socketgroup.go); nil: those sockets are schedd's user's alone.
	SocketGroup *SocketGroup
}

// Listen is one address to serve the API on.
type Listen struct {
	Network string // unix | tcp
	Address string // a socket path, or HOST:PORT
	// Default is set for the zero-config socket, whose private directory
	// schedd creates and checks.
	Default bool
	// Group is Config.SocketGroup on a unix:PATH socket it shares; nil
	// for a private socket.
	Group *SocketGroup
}

func (l Listen) String() string { return l.Network + ":" + l.Address }

// UsageError is bad input on the command line or in the environment: the
// daemon exits 2 without touching anything.
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

func usage(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// ErrHelp and ErrVersion are returned by ParseConfig for --help and
// --version, after printing what was asked.
var (
	ErrHelp    = errors.New("help requested")
	ErrVersion = errors.New("version requested")
)

const helpLong = `schedd is sched's daemon: it turns schedules into occurrences on a durable
queue and serves the HTTP/JSON API (/v1, see docs/api.md) to schedctl and
workers.

With no flags it keeps its SQLite database at $XDG_DATA_HOME/sched/sched.db
(else ~/.local/share/sched/sched.db) and listens on the Unix socket
$XDG_RUNTIME_DIR/sched/schedd.sock (else /tmp/sched-$UID/schedd.sock), in a
directory only you can enter. SIGTERM or SIGINT shuts it down cleanly.
SIGHUP reads the tz database again (after a tz package update) and moves
the firings of cron schedules whose zone's rules changed, as schedctl
admin reload-tz does.

With --tls-cert and --tls-key every TCP listener serves TLS (1.2 or later),
and may then listen beyond loopback (with a token); --tls-client-ca also
requires client certificates. The certificate and key are read again on
SIGHUP and when their files change; a new pair that does not load leaves
the old one in service.

The Unix socket serves schedd's own user alone. --socket-group NAME shares
the sockets of --listen unix:PATH with the members of a group: they are
served as schedd's user is, an admin of the default tenant.

With --store postgres://..., any number of schedd nodes share one
PostgreSQL database: they register in it, share the shards between them,
and take over a stopped node's shards at once and a dead node's within
--shard-lease. Add schema=NAME to the URL to use (and create) a schema of
its own; search_path=NAME also works for a schema that exists.

Flags are spelled with two dashes (--store); the one-dash spelling of
earlier releases (-store) is still accepted.

Two subcommands work without a running daemon:
  schedd simulate -f FILE --from T --to T   a what-if simulation of a
      schedules file on a private store (schedd simulate --help)
  schedd reconcile --store URL              an audit of a store: every
      firing each schedule version should have produced, against the
      occurrences stored (schedd reconcile --help)

Exit status: 0 after a clean shutdown, 2 on invalid input (a bad flag or
value; nothing is touched), 1 on any other failure; errors are one line on
stderr.`

const helpExamples = `  schedd
  schedd --store sqlite:/var/lib/sched/sched.db --listen unix:/run/sched/schedd.sock,tcp:127.0.0.1:7070
  schedd --store 'postgres://sched@db.internal:5432/sched?sslmode=verify-full' --listen unix:/run/sched/schedd.sock
  SCHED_TOKEN=$(cat token) schedd --listen tcp:127.0.0.1:7070
  schedd --listen unix:/run/sched/schedd.sock --socket-group sched
  SCHED_TOKEN=$(cat token) schedd --listen tcp:0.0.0.0:7443 --tls-cert server.crt --tls-key server.key
  curl --unix-socket "$XDG_RUNTIME_DIR/sched/schedd.sock" http://sched/v1/status`

// ParseConfig reads flags from args and defaults from env (SCHED_STORE,
// SCHED_LISTEN, SCHED_TOKEN, SCHED_TLS_CERT, SCHED_TLS_KEY,
// SCHED_TLS_CLIENT_CA); a flag wins over its variable. --help and
// --version print to out and return ErrHelp or ErrVersion; bad input is a
// *UsageError. ver is what --version reports as schedd's release.
func ParseConfig(args []string, env paths.Env, ver string, out io.Writer) (Config, error) {
	var (
		cfg         Config
		store       string
		listen      string
		showVersion bool
		ran         bool
		logLevel    string
		socketGroup string
	)
	cmd := &cobra.Command{
		Use:     "schedd",
		Short:   "sched's daemon: schedules in, occurrences on a durable queue out",
		Long:    helpLong,
		Example: helpExamples,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usage("unexpected argument %q: schedd takes only flags (see schedd --help)", args[0])
			}
			return nil
		},
		RunE:          func(*cobra.Command, []string) error { ran = true; return nil },
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.SetOut(out)
	cmd.SetErr(io.Discard)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usage("%v (see schedd --help)", err)
	})
	fs := cmd.Flags()
	fs.SortFlags = false
	// The environment's values are applied after parsing, not as the flags'
	// defaults, so that --help never prints a token from SCHED_TOKEN.
	fs.StringVar(&store, "store", "", "the store: `sqlite:PATH` or a postgres:// URL (optional schema=NAME parameter) (env SCHED_STORE; default the SQLite file above)")
	fs.StringVar(&listen, "listen", "", "comma-separated `addresses`: unix:PATH, unix (the default socket), tcp:HOST:PORT (env SCHED_LISTEN; default the Unix socket above)")
	fs.StringVar(&cfg.NodeID, "node-id", "", "this node's name as the owner of shard leases, unique per running node (default HOSTNAME-PID-RANDOM)")
	fs.IntVar(&cfg.Shards, "shards", 0, "number of logical shards; fixed for the life of a database (default: the database's own; a new one gets 1 on SQLite, 16 on PostgreSQL)")
	fs.DurationVar(&cfg.Horizon, "horizon", engine.DefaultHorizon, "how far ahead occurrences are put on the queue")
	fs.DurationVar(&cfg.ShardLease, "shard-lease", engine.DefaultShardLease, "how long a shard lease lasts without renewal: the longest a dead node's shards wait to move")
	fs.StringVar(&cfg.Token, "token", "", "the operator's `TOKEN`: sent as \"Authorization: Bearer TOKEN\" it acts as an admin of the default tenant, as a request over the Unix socket does without one; tenants' tokens are made with schedctl tenant (env SCHED_TOKEN, which ps does not show; prefer it)")
	fs.StringVar(&cfg.LogFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "the least severe `level` logged on stderr: "+logLevelNames+" (debug adds a line per API request)")
	fs.StringVar(&socketGroup, "socket-group", "", "also serve the members of the group `NAME` on the sockets of --listen unix:PATH, as schedd's own user is served: as an admin of the default tenant, on every route; the socket is made group-owned by NAME, mode 0660 (default: off, the socket is schedd's user's alone; see docs/security.md)")
	fs.BoolVar(&cfg.InsecureListen, "insecure-listen", false, "allow plain HTTP on a TCP address that is not loopback (without --tls-cert)")
	fs.IntVar(&cfg.MaxWaitingClaims, "max-waiting-claims", server.DefaultMaxWaitingClaims, "how many claims with a wait (long polls) are served at once; more are answered 429 too_many_waiting")
	fs.IntVar(&cfg.MaxConnections, "max-connections", DefaultMaxConnections, "how many connections each listener keeps open at once; more are closed as soon as they are accepted")
	fs.IntVar(&cfg.MaxConnectionsPerClient, "max-connections-per-client", 0, fmt.Sprintf("how many of a TCP listener's connections one client address (an IPv6 /64) keeps open at once; more are closed as soon as they are accepted (0: --max-connections/%d)", ConnectionShare))
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "serve TLS on every TCP listener with the PEM certificate (chain) in `FILE`; needs --tls-key; reloaded on SIGHUP and when the file changes (env SCHED_TLS_CERT)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "the PEM private key of --tls-cert, in `FILE` (env SCHED_TLS_KEY)")
	fs.StringVar(&cfg.TLSClientCA, "tls-client-ca", "", "require TLS clients to present a certificate signed by a CA in the PEM bundle `FILE` (mutual TLS; needs --tls-cert) (env SCHED_TLS_CLIENT_CA)")
	fs.Float64Var(&cfg.APIRate, "api-rate", 0, fmt.Sprintf("each tenant's quota of API requests per second on this node (0: %d); more are answered 429 rate_limited with Retry-After", server.DefaultAPIRate))
	fs.IntVar(&cfg.APIBurst, "api-burst", 0, "how many API requests a tenant may send at once above --api-rate (0: twice the rate)")
	fs.IntVar(&cfg.MaxWaitingClaimsPerTenant, "max-waiting-claims-per-tenant", 0, fmt.Sprintf("how many claims with a wait one tenant has at once, within --max-waiting-claims (0: --max-waiting-claims/%d, at least 1); more are answered 429 too_many_waiting", server.WaitingClaimsShare))
	fs.Float64Var(&cfg.AuthFailureRate, "auth-failure-rate", 0, fmt.Sprintf("how many failed authentications (401 answers) a second one client address (an IPv6 /64) may have over TCP, burst twice that (0: %d); once spent, its requests are answered 429 rate_limited with Retry-After before their token is looked up", server.DefaultAuthFailureRate))
	fs.DurationVar(&cfg.AuditRetention, "audit-retention", engine.DefaultAuditRetention, "how long the audit log keeps a change (0: forever)")
	quotaFlags(fs, &cfg.Quotas)
	retentionFlag(fs, &cfg.Retention)
	var webhookAllow []string
	fs.StringSliceVar(&webhookAllow, "webhook-allow", nil, "let webhook targets reach the address range `CIDR` (repeatable), which the guard against request forgery refuses otherwise: loopback, private, link-local and cloud metadata addresses")
	fs.BoolVar(&showVersion, "version", false, "print the version and exit")
	cmd.SetArgs(doubleDash(fs, args))
	if err := cmd.Execute(); err != nil {
		var ue *UsageError
		if !errors.As(err, &ue) {
			err = usage("%v (see schedd --help)", err)
		}
		return cfg, err
	}
	if !ran { // cobra printed the help
		return cfg, ErrHelp
	}
	if showVersion {
		fmt.Fprintln(out, version.Line("schedd", ver))
		return cfg, ErrVersion
	}
	for name, p := range map[string]*string{"store": &store, "listen": &listen, "token": &cfg.Token,
		"tls-cert": &cfg.TLSCert, "tls-key": &cfg.TLSKey, "tls-client-ca": &cfg.TLSClientCA} {
		if !fs.Changed(name) {
			*p = envOr(env, "SCHED_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_")), "")
		}
	}
	if err := checkTLSFlags(cfg); err != nil {
		return cfg, err
	}

	var err error
	if err = cfg.setStore(store, env); err != nil {
		return cfg, err
	}
	if cfg.Listen, err = parseListen(listen, env); err != nil {
		return cfg, err
	}
	if fs.Changed("socket-group") {
		if err := setSocketGroup(&cfg, socketGroup); err != nil {
			return cfg, err
		}
	}
	if cfg.NodeID != "" {
		// A node id given is a name like the others (`schedctl cluster`
		// shows it): the one rule of names, up to 200 bytes.
		if err := schedule.CheckFreeName("--node-id", cfg.NodeID, 200); err != nil {
			return cfg, usage("%s", err)
		}
	} else {
		host, err := os.Hostname()
		if err != nil || host == "" {
			host = "schedd"
		}
		// The pid alone can repeat: in containers (pid 1 everywhere) and
		// across restarts. A node id must be unique among running nodes,
		// so it gets a random suffix too.
		var b [3]byte
		_, _ = rand.Read(b[:])
		cfg.NodeID = host + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	}
	switch {
	case cfg.Shards < 0 || cfg.Shards > 4096:
		return cfg, usage("--shards %d: must be from 1 to 4096, or 0 for the database's own count", cfg.Shards)
	case cfg.Horizon < time.Second || cfg.Horizon > 24*time.Hour:
		return cfg, usage("--horizon %s: must be from 1s to 24h", cfg.Horizon)
	case cfg.ShardLease < time.Second || cfg.ShardLease > 10*time.Minute:
		return cfg, usage("--shard-lease %s: must be from 1s to 10m", cfg.ShardLease)
	case cfg.MaxWaitingClaims < 1 || cfg.MaxWaitingClaims > 1_000_000:
		return cfg, usage("--max-waiting-claims %d: must be from 1 to 1000000", cfg.MaxWaitingClaims)
	case cfg.MaxConnections < 1 || cfg.MaxConnections > 1_000_000:
		return cfg, usage("--max-connections %d: must be from 1 to 1000000", cfg.MaxConnections)
	case cfg.MaxConnectionsPerClient < 0 || cfg.MaxConnectionsPerClient > 1_000_000:
		return cfg, usage("--max-connections-per-client %d: must be from 1 to 1000000, or 0 for --max-connections/%d", cfg.MaxConnectionsPerClient, ConnectionShare)
	case !(cfg.AuthFailureRate >= 0 && cfg.AuthFailureRate <= 1e9):
		return cfg, usage("--auth-failure-rate %v: must be from 0 (the default, %d) to 1000000000 failures per second", cfg.AuthFailureRate, server.DefaultAuthFailureRate)
	case !(cfg.APIRate >= 0 && cfg.APIRate <= 1e9):
		return cfg, usage("--api-rate %v: must be from 0 (the default, %d) to 1000000000 requests per second", cfg.APIRate, server.DefaultAPIRate)
	case cfg.APIBurst < 0 || cfg.APIBurst > 1_000_000_000:
		return cfg, usage("--api-burst %d: must be from 1 to 1000000000, or 0 for twice the rate", cfg.APIBurst)
	case cfg.MaxWaitingClaimsPerTenant < 0 || cfg.MaxWaitingClaimsPerTenant > 1_000_000:
		return cfg, usage("--max-waiting-claims-per-tenant %d: must be from 1 to 1000000, or 0 for --max-waiting-claims/%d", cfg.MaxWaitingClaimsPerTenant, server.WaitingClaimsShare)
	case cfg.AuditRetention < 0 || (cfg.AuditRetention > 0 && cfg.AuditRetention < time.Hour):
		return cfg, usage("--audit-retention %s: must be 1h or more, or 0 to keep every change forever", cfg.AuditRetention)
	case cfg.LogFormat != "text" && cfg.LogFormat != "json":
		return cfg, usage("--log-format %q: want text or json", cfg.LogFormat)
	case strings.ContainsAny(cfg.Token, " \t\r\n"):
		return cfg, usage("--token: must not contain spaces or line breaks")
	}
	if cfg.LogLevel, err = parseLogLevel(logLevel); err != nil {
		return cfg, err
	}
	if err := checkRetention(cfg.Retention); err != nil {
		return cfg, err
	}
	for _, c := range webhookAllow {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return cfg, usage("--webhook-allow %q: not a CIDR range such as 10.1.0.0/16 or 127.0.0.1/32", c)
		}
		cfg.WebhookAllow = append(cfg.WebhookAllow, p.Masked())
	}
	if err := checkQuotas(cfg.Quotas); err != nil {
		return cfg, err
	}
	for _, l := range cfg.Listen {
		if err := checkExposure(l, cfg); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// doubleDash spells the one-dash long flags of earlier releases (-store,
// -listen=...) with two dashes, as cobra wants them, so that scripts
// written for them keep working. Only names of fs's flags are rewritten,
// never a flag's value, nor anything after "--".
func doubleDash(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...)
		}
		name, hasValue := "", false
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, hasValue = strings.Cut(a[2:], "=")
		case strings.HasPrefix(a, "-") && len(a) > 2:
			name, _, hasValue = strings.Cut(a[1:], "=")
			if fs.Lookup(name) != nil {
				a = "-" + a
			}
		}
		out = append(out, a)
		// A flag that takes a value and was not given one with = takes the
		// next argument as it is, even if it starts with a dash.
		if f := fs.Lookup(name); f != nil && !hasValue && f.NoOptDefVal == "" && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out
}

func envOr(env paths.Env, name, def string) string {
	if v, ok := env(name); ok && v != "" {
		return v
	}
	return def
}

// parsePostgres splits a postgres:// store URL into the DSN pgx takes and
// sched's own schema=NAME parameter, which it removes (PostgreSQL would
// refuse it as an unknown run-time parameter).
func parsePostgres(s string) (dsn, schema string, err error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" && u.Path == "" && u.RawQuery == "" {
		// The URL may hold a password: do not quote it.
		return "", "", usage("--store: the postgres:// URL does not parse")
	}
	q := u.Query()
	if vs, ok := q["schema"]; ok {
		if len(vs) != 1 || vs[0] == "" || len(vs[0]) > 63 {
			return "", "", usage("--store: schema=NAME takes one name of 1 to 63 bytes")
		}
		schema = vs[0]
		q.Del("schema")
		u.RawQuery = q.Encode()
	}
	return u.String(), schema, nil
}

// setStore reads --store (or SCHED_STORE): a postgres:// URL, or a SQLite
// file (the default one when s is empty).
func (c *Config) setStore(s string, env paths.Env) (err error) {
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		c.PostgresDSN, c.PostgresSchema, err = parsePostgres(s)
		return err
	}
	c.StorePath, c.DefaultStore, err = parseStore(s, env)
	return err
}

// RedactedStore names the store for logs and errors, without a password.
func (c Config) RedactedStore() string {
	if c.PostgresDSN == "" {
		return "sqlite:" + c.StorePath
	}
	u, err := url.Parse(c.PostgresDSN)
	if err != nil {
		return "postgres"
	}
	s := u.Scheme + "://" + u.Host + u.Path
	if c.PostgresSchema != "" {
		s += "?schema=" + c.PostgresSchema
	}
	return s
}

func parseStore(s string, env paths.Env) (path string, isDefault bool, err error) {
	switch {
	case s == "":
		p, err := paths.Database(env)
		if err != nil {
			return "", false, usage("%v", err)
		}
		return p, true, nil
	case strings.HasPrefix(s, "sqlite:"):
		p := strings.TrimPrefix(s, "sqlite:")
		p = strings.TrimPrefix(p, "//") // sqlite:///abs/path
		if p == "" {
			return "", false, usage("--store %q: give a file, sqlite:PATH", s)
		}
		if strings.HasPrefix(p, "~/") {
			home, ok := env("HOME")
			if !ok || home == "" {
				return "", false, usage("--store %q: HOME is not set", s)
			}
			p = filepath.Join(home, p[2:])
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", false, usage("--store %q: %v", s, err)
		}
		return abs, false, nil
	}
	return "", false, usage("--store %q: want sqlite:PATH or a postgres:// URL", s)
}

// maxSocketPath is the longest Unix socket path every supported OS takes
// (sun_path is 104 bytes on the BSDs and macOS, 108 on Linux).
const maxSocketPath = 103

func parseListen(s string, env paths.Env) ([]Listen, error) {
	if strings.TrimSpace(s) == "" {
		return []Listen{{Network: "unix", Address: paths.Socket(env), Default: true}}, nil
	}
	var out []Listen
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		var l Listen
		switch {
		case part == "unix":
			// The default socket, beside other addresses.
			l = Listen{Network: "unix", Address: paths.Socket(env), Default: true}
		case strings.HasPrefix(part, "unix:"):
			p := strings.TrimPrefix(part, "unix:")
			if p == "" {
				return nil, usage("--listen %q: give a socket path, unix:PATH", part)
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, usage("--listen %q: %v", part, err)
			}
			if len(abs) > maxSocketPath {
				return nil, usage("--listen %q: the socket path is %d bytes, longer than the %d a Unix socket allows", part, len(abs), maxSocketPath)
			}
			l = Listen{Network: "unix", Address: abs, Default: abs == paths.Socket(env)}
		case strings.HasPrefix(part, "tcp:"):
			addr := strings.TrimPrefix(part, "tcp:")
			_, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, usage("--listen %q: want tcp:HOST:PORT (%v)", part, err)
			}
			if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
				return nil, usage("--listen %q: port %q is not a number from 0 to 65535", part, port)
			}
			l = Listen{Network: "tcp", Address: addr}
		case strings.HasPrefix(part, "https://"):
			return nil, usage("--listen %q: for TLS, listen on tcp:HOST:PORT and give --tls-cert and --tls-key", part)
		default:
			return nil, usage("--listen %q: want unix:PATH or tcp:HOST:PORT", part)
		}
		if seen[l.String()] {
			return nil, usage("--listen: %s is given twice", l)
		}
		seen[l.String()] = true
		out = append(out, l)
	}
	return out, nil
}

// checkExposure refuses plain HTTP on a network address, where tokens and
// payloads would cross the network in clear text: TCP on anything but
// loopback needs TLS (--tls-cert) or --insecure-listen.
func checkExposure(l Listen, cfg Config) error {
	if l.Network != "tcp" {
		return nil
	}
	host, _, _ := net.SplitHostPort(l.Address)
	if isLoopback(host) {
		return nil
	}
	if !cfg.InsecureListen && !cfg.TLSEnabled() {
		return usage("refusing to listen on %s: it is not a loopback address and TLS is off, so tokens and payloads would cross the network in clear text; give --tls-cert and --tls-key, listen on tcp:127.0.0.1:PORT, or pass --insecure-listen if you accept that", l)
	}
	// No token is needed to start: over TCP every request needs one, a
	// tenant's (schedctl tenant) or the operator's (--token).
	return nil
}

// isLoopback reports whether host is certainly a loopback address: an IP
// literal in 127.0.0.0/8 or ::1, or "localhost". Other names are not
// resolved (they can change); an empty host is every interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkTLSFlags requires --tls-cert and --tls-key together, and either of
// them for --tls-client-ca.
func checkTLSFlags(cfg Config) error {
	switch {
	case cfg.TLSCert != "" && cfg.TLSKey == "":
		return usage("--tls-cert is given without --tls-key (or SCHED_TLS_KEY): give the certificate's private key too")
	case cfg.TLSKey != "" && cfg.TLSCert == "":
		return usage("--tls-key is given without --tls-cert (or SCHED_TLS_CERT): give the certificate too")
	case cfg.TLSClientCA != "" && cfg.TLSCert == "":
		return usage("--tls-client-ca needs --tls-cert and --tls-key: client certificates are asked for only over TLS")
	}
	return nil
}
