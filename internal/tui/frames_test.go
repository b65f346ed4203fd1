package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"
)

var timeUTC = time.UTC

// loaded is the fixture dashboard after enough polls for a trend, showing
// view v: the Schedules view with nightly-report selected (its preview
// meets a DST gap).
func loaded(t *testing.T, v view, w, h int, color bool) *harness {
	t.Helper()
	hs := newHarness(t, newFixture(len(delivTrend)), w, h, color)
	hs.ticks(len(delivTrend) - 1)
	switch v {
	case viewSchedules:
		hs.keys("tab")
		for hs.m.selID != "sch_nightly" {
			hs.keys("j")
		}
	case viewDLQ:
		hs.keys("tab", "tab")
	}
	return hs
}

// TestFrames pins every view at 80x24 and 120x40, with colours (256, on a
// fixed profile) and without: the frame without colours must hold no
// escape code at all.
func TestFrames(t *testing.T) {
	for _, v := range []view{viewOverview, viewSchedules, viewDLQ} {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			for _, color := range []bool{false, true} {
				name := fmt.Sprintf("%s_%dx%d", strings.ToLower(v.String()), size[0], size[1])
				if color {
					name += "_color"
				}
				t.Run(name, func(t *testing.T) {
					hs := loaded(t, v, size[0], size[1], color)
					frame := hs.view()
					if got := strings.Count(frame, "\n") + 1; got != size[1] {
						t.Errorf("the frame has %d lines, want %d", got, size[1])
					}
					for i, l := range strings.Split(frame, "\n") {
						if w := lipgloss.Width(l); w > size[0] {
							t.Errorf("line %d is %d cells wide, more than %d: %q", i+1, w, size[0], l)
						}
					}
					hasEsc := strings.Contains(frame, "\x1b")
					if !color && hasEsc {
						t.Errorf("a frame without colour holds an escape code")
					}
					if color && !hasEsc {
						t.Errorf("a frame with colour holds no escape code")
					}
					golden(t, name, frame)
				})
			}
		}
	}
}

// TestREADMEFrame is the Overview the README shows, at 100x30 without
// colour.
func TestREADMEFrame(t *testing.T) {
	hs := loaded(t, viewOverview, 100, 30, false)
	golden(t, "readme_overview_100x30", hs.view())
}

// TestTenantOverview: a tenant's status has no lags, rates, last hour nor
// last passes (null: counted across every tenant). The Overview says they
// are not shown, draws no trend, and still fits its frame.
func TestTenantOverview(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := newFixture(3)
		for i := range f.statuses {
			st := &f.statuses[i]
			st.Tenant = "acme"
			st.ScheduleLag, st.DeliveryLag, st.LastHour, st.Throughput = nil, nil, nil, nil
			for j := range st.Nodes {
				st.Nodes[j].LastPass = nil
			}
		}
		hs := newHarness(t, f, size[0], size[1], false)
		hs.ticks(2)
		frame := hs.view()
		if got := strings.Count(frame, "\n") + 1; got != size[1] {
			t.Errorf("%dx%d: the frame has %d lines", size[0], size[1], got)
		}
		for i, l := range strings.Split(frame, "\n") {
			if w := lipgloss.Width(l); w > size[0] {
				t.Errorf("%dx%d: line %d is %d cells wide: %q", size[0], size[1], i+1, w, l)
			}
		}
		if !strings.Contains(frame, "not shown to a tenant") {
			t.Errorf("%dx%d: the frame does not say the lags are not shown:\n%s", size[0], size[1], frame)
		}
		if len(hs.m.history) != 0 {
			t.Errorf("%dx%d: %d lag samples kept from a tenant's status", size[0], size[1], len(hs.m.history))
		}
	}
}
