package cli

import (
	"strings"
	"testing"
	"time"
)

// --as-of is a date; empty is today (UTC) by the factory's clock.
func TestAsOfFlag(t *testing.T) {
	a := asOfFlag{now: func() time.Time { return time.Date(2026, 11, 29, 23, 30, 0, 0, time.FixedZone("", -3600)) }}
	if err := a.complete(); err != nil || a.date() != "2026-11-30" {
		t.Errorf("empty --as-of: %v, %s", err, a.date())
	}
	a.raw = "2026-02-30"
	if err := a.complete(); err == nil || !strings.Contains(err.Error(), `--as-of "2026-02-30": want a date`) {
		t.Errorf("--as-of 2026-02-30: %v", err)
	}
}
