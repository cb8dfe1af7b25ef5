package spec

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	// The zone database compiled into gpuctl: time.LoadLocation falls back
	// to it where the machine's has no such zone or there is none
	// (distroless images, Windows), so validate does not depend on the
	// machine having a zone database.
	_ "time/tzdata"
)

// tzNames lists the zone names of the embedded database, for the
// did-you-mean of an unknown time zone (time.LoadLocation decides what is
// known).
//
//go:embed tznames.txt
var tzNamesText string

var tzNames = sync.OnceValue(func() []string {
	var out []string
	for _, l := range strings.Split(tzNamesText, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
})

// tzComponent is one component of a time zone name as the kube-apiserver
// accepts it.
var tzComponent = regexp.MustCompile(`^[A-Za-z\.\-_0-9+]{1,14}$`)

// ParseTimeZone checks a CronJob's spec.timeZone as the kube-apiserver
// does (validateTimeZone in
// https://github.com/kubernetes/kubernetes/blob/master/pkg/apis/batch/validation/validation.go,
// 2026-12-03): each '/'-separated component of 1 to 14 letters, digits,
// '.', '-', '_' or '+', not "." or "..", not starting with '-'; not
// "Local"; and a name time.LoadLocation knows (the machine's zone
// database, else the one compiled into gpuctl). Errors say which, with the
// closest known name when one is close (Near).
func ParseTimeZone(tz string) error {
	for _, part := range strings.Split(tz, "/") {
		if part == "." || part == ".." || strings.HasPrefix(part, "-") || !tzComponent.MatchString(part) {
			return fmt.Errorf("time zone %q is not an IANA time zone name", tz)
		}
	}
	if strings.EqualFold(tz, "Local") {
		return fmt.Errorf("time zone %q is the controller's own, not a time zone the CronJob can name", tz)
	}
	if _, err := time.LoadLocation(tz); err != nil {
		return fmt.Errorf("unknown time zone %q", tz)
	}
	return nil
}

// NearestTimeZone is the known zone name closest to tz ("" when none is
// close).
func NearestTimeZone(tz string) string { return NearestFold(tz, tzNames()) }

// timeZoneHint is the fix of a refused time zone: the closest name, or
// what a name looks like.
func timeZoneHint(tz string) string {
	if near := NearestTimeZone(tz); near != "" && near != tz {
		return fmt.Sprintf("did you mean %q?", near)
	}
	return `name an IANA time zone, e.g. timeZone: Etc/UTC or Europe/Berlin (https://www.iana.org/time-zones)`
}
