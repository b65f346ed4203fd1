package daemon

import (
	"io"
	"log/slog"
	"strings"
)

// logLevelNames are the values --log-level takes, least severe first.
const logLevelNames = "debug, info, warn or error"

// parseLogLevel reads --log-level: one of logLevelNames, in any case.
// Anything else is a usage error naming the flag and the values it takes.
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return slog.LevelInfo, usage("--log-level %q: want %s", s, logLevelNames)
}

// NewLogger is schedd's structured logger on w, in format (text or json),
// logging level and above. At info (the default) a node logs what an
// operator acts on: starts and stops, shard leases taken and released,
// nodes removed from the registry, tz database reloads, requests refused
// by a quota or limit, and every warning and error; debug adds a line per
// API request (route pattern, status, tenant, token name).
func NewLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
