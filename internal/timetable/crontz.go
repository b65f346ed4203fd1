package timetable

import (
	"errors"
	"strings"
)

// zonePrefixes are the ways a cron expression can name its own zone, as
// Kubernetes CronJob and robfig/cron write it: "CRON_TZ=Europe/Berlin 0 9 * * *"
// (TZ= is robfig's older spelling). Accepting them lets an expression move
// from those systems without edits.
var zonePrefixes = [...]string{"CRON_TZ=", "TZ="}

// ZonePrefix reports whether a cron expression starts with a CRON_TZ= or
// TZ= prefix and returns the zone it names (possibly "" or not a real
// zone: Parse judges it). Callers that must know whether an expression
// brings its own zone before parsing it (a "time zone is required" check)
// ask here; the rule itself is Parse's.
func ZonePrefix(expr string) (zone string, ok bool) {
	_, zone, _, ok = splitZonePrefix(expr)
	return zone, ok
}

// splitZonePrefix cuts a leading CRON_TZ=ZONE or TZ=ZONE off expr: rest is
// the expression after it (spaces trimmed), prefix the spelling used
// ("CRON_TZ=").
func splitZonePrefix(expr string) (rest, zone, prefix string, ok bool) {
	s := strings.TrimLeft(expr, " \t")
	for _, p := range zonePrefixes {
		if after, found := strings.CutPrefix(s, p); found {
			zone, rest = after, ""
			if i := strings.IndexAny(after, " \t"); i >= 0 {
				zone, rest = after[:i], after[i:]
			}
			return strings.TrimSpace(rest), zone, p, true
		}
	}
	return expr, "", "", false
}

// applyZonePrefix moves a cron definition's CRON_TZ=/TZ= prefix into its
// TimeZone, so the definition is stored and shown in one form: the
// expression without the prefix, the zone in TimeZone. A zone given both
// ways must be the same name (an error of the cron field, which brought
// the second zone); a prefix zone that is not a known IANA zone gets
// LoadZone's time_zone error, naming the prefix. Errors are *InvalidError.
func applyZonePrefix(d Definition) (Definition, error) {
	if d.Kind != KindCron {
		return d, nil
	}
	rest, zone, prefix, ok := splitZonePrefix(d.Expr)
	if !ok {
		return d, nil
	}
	if zone == "" {
		return d, invalid("cron", "cron expression: the %s prefix names no time zone (write e.g. %sEurope/Berlin 0 9 * * *)", prefix, prefix)
	}
	if _, err := LoadZone(zone); err != nil {
		var ie *InvalidError
		if errors.As(err, &ie) {
			// The same error as a bad time_zone (field and all), naming
			// where the zone was written.
			return d, invalid("time_zone", "cron expression's %s prefix: %s", prefix, ie.Msg)
		}
		return d, err
	}
	if rest == "" {
		return d, invalid("cron", "cron expression: nothing after the %s%s prefix; want the fields, e.g. %s%s 0 9 * * *", prefix, zone, prefix, zone)
	}
	if d.TimeZone != "" && d.TimeZone != zone {
		return d, invalid("cron", "time zone %q differs from %q in the cron expression's %s prefix: give the zone once, or the same zone in both", d.TimeZone, zone, prefix)
	}
	d.Expr, d.TimeZone = rest, zone
	return d, nil
}
