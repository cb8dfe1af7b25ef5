package rules

import "time"

var asOf20261129 = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)

func mustDate(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}
