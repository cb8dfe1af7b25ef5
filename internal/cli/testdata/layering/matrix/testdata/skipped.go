package skipped

import "os"

// testdata is skipped, as the go tool skips it.
var _ = os.Stdout
