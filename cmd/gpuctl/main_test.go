package main

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gpuctl/gpuctl/internal/cli"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"gpuctl": func() { os.Exit(cli.Main()) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script against the
// real command tree. Scripts can read the repository's examples through
// $EXAMPLES and its test data (the corpus of real tool outputs) through
// $TESTDATA.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "../../testdata/script",
		Setup: func(env *testscript.Env) error {
			wd, err := os.Getwd()
			if err != nil {
				return err
			}
			env.Setenv("EXAMPLES", wd+"/../../examples")
			env.Setenv("TESTDATA", wd+"/../../testdata")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits": cmdExits,
			"sarif": cmdSARIF,
		},
	})
}

// cmdExits implements `exits CODE PROGRAM [ARGS...]`: it runs PROGRAM like exec
// and fails unless the exit status is exactly CODE. Stdout and stderr are
// available to the following stdout/stderr assertions.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("exit status %d, want %d", got, want)
	}
}

// cmdSARIF implements `sarif FILE`: it fails unless FILE is a SARIF 2.1.0
// log that validates against the schema (go-sarif's copy of OASIS's),
// what code scanning's upload accepts.
func cmdSARIF(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sarif FILE")
	}
	log, err := sarif.FromBytes([]byte(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("sarif: %s is not a SARIF log: %v", args[0], err)
	}
	if err := log.Validate(); err != nil {
		ts.Fatalf("sarif: %s: %v", args[0], err)
	}
}
