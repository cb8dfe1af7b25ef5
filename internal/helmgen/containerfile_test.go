package helmgen

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestContainerfileMatchesCronJob: the repository's Containerfile, which
// `make image` builds, puts gpuctl where the generated CronJob runs it
// (SweepBinary) and runs as the user the CronJob's pod asks for (sweepUID,
// numeric, so runAsNonRoot can be checked), in its final stage.
func TestContainerfileMatchesCronJob(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "Containerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := regexp.MustCompile(`(?m)^FROM `).Split(string(b), -1)
	final := stages[len(stages)-1]
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^COPY --from=build \S+ ` + regexp.QuoteMeta(SweepBinary) + `$`),
		regexp.MustCompile(fmt.Sprintf(`(?m)^USER %d:%d$`, sweepUID, sweepUID)),
		regexp.MustCompile(`(?m)^ENTRYPOINT \["` + regexp.QuoteMeta(SweepBinary) + `"\]$`),
	} {
		if !want.MatchString(final) {
			t.Errorf("the Containerfile's final stage has no line matching %s", want)
		}
	}
}
