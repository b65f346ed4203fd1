package daemon

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestLogLevelFlag: --log-level takes debug, info, warn or error (in any
// case; info when not given); any other value is a usage error naming the
// flag and the values it takes.
func TestLogLevelFlag(t *testing.T) {
	t.Parallel()
	env := envOf("XDG_DATA_HOME", "/data", "XDG_RUNTIME_DIR", "/run/user/7", "HOME", "/home/u")
	for _, tc := range []struct {
		args []string
		want slog.Level
		err  string // a usage error with this text; "" for none
	}{
		{nil, slog.LevelInfo, ""},
		{[]string{"--log-level", "debug"}, slog.LevelDebug, ""},
		{[]string{"--log-level", "info"}, slog.LevelInfo, ""},
		{[]string{"--log-level=warn"}, slog.LevelWarn, ""},
		{[]string{"--log-level", "ERROR"}, slog.LevelError, ""},
		{[]string{"--log-level", "verbose"}, 0, `--log-level "verbose": want debug, info, warn or error`},
		{[]string{"--log-level", ""}, 0, `--log-level "": want debug, info, warn or error`},
		{[]string{"--log-level", "warning"}, 0, `--log-level "warning": want debug, info, warn or error`},
	} {
		cfg, err := ParseConfig(tc.args, env, "v", io.Discard)
		var ue *UsageError
		switch {
		case tc.err != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v; want a usage error saying %s", tc.args, err, tc.err)
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err == "" && cfg.LogLevel != tc.want:
			t.Errorf("%q: log level %v, want %v", tc.args, cfg.LogLevel, tc.want)
		}
	}
}

// TestNewLoggerLevel: the logger schedd builds drops what is below its
// level, in both formats.
func TestNewLoggerLevel(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"text", "json"} {
		for _, tc := range []struct {
			level slog.Level
			want  string // the messages logged, of debug, info, warn and error
		}{
			{slog.LevelDebug, "d i w e"},
			{slog.LevelInfo, "i w e"},
			{slog.LevelWarn, "w e"},
			{slog.LevelError, "e"},
		} {
			var buf bytes.Buffer
			log := NewLogger(format, tc.level, &buf)
			log.Debug("d")
			log.Info("i")
			log.Warn("w")
			log.Error("e")
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				for _, m := range []string{"d", "i", "w", "e"} {
					if strings.Contains(line, `msg=`+m) || strings.Contains(line, `"msg":"`+m+`"`) {
						got = append(got, m)
					}
				}
			}
			if strings.Join(got, " ") != tc.want {
				t.Errorf("%s at %v logged %q; want %s", format, tc.level, got, tc.want)
			}
		}
	}
}
