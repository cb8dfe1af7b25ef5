package hclgen

import (
	"flag"
	"os"
	"testing"
	"time"
)

// TestMain makes expr check every one-line expression it writes.
func TestMain(m *testing.M) {
	checkExprs = true
	os.Exit(m.Run())
}

var update = flag.Bool("update", false, "rewrite the golden files")

// asOf pins date-dependent rules, as the reference material does.
var asOf = time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
