package cli

import (
	"errors"
	"fmt"
)

// Exit codes shared by every gpuctl command. The README and `gpuctl --help`
// print the same table.
const (
	ExitOK           = 0   // success: no error finding, acceptance PASS
	ExitToolError    = 1   // gpuctl itself failed (I/O, API, bug)
	ExitUsage        = 2   // bad flags or unreadable/invalid input
	ExitCheckFailed  = 3   // checks ran and found problems (validate errors, acceptance FAIL)
	ExitInconclusive = 4   // inconclusive, or a prerequisite (NVML, cluster) is unavailable
	ExitInterrupted  = 130 // stopped by SIGINT (Ctrl-C): 128 + 2
	ExitTerminated   = 143 // stopped by SIGTERM: 128 + 15
)

// ExitCodeHelp is the exit-code table as printed in --help.
const ExitCodeHelp = `Exit codes:
  0  ok
  1  tool error
  2  usage error or unreadable input
  3  the check found problems (validation errors, acceptance FAIL)
  4  inconclusive, or a prerequisite is unavailable
  130  interrupted (SIGINT, Ctrl-C); 143  terminated (SIGTERM): nothing
       partial is left (accept deletes what it created and exits 4)`

// ExitError carries an exit code through cobra's error return. A nil Err
// means "exit with Code silently" (the command already reported).
type ExitError struct {
	Code int
	Err  error
	// Usage marks a wrong use of a command (flags, arguments, their
	// combination): Main adds a hint to the command's --help.
	Usage bool
	// Written: the command wrote the error in its output document too
	// (validate's -o json|yaml|sarif); Main writes no other.
	Written bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf returns an error that exits 2.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...), Usage: true}
}

// withCode wraps err so that Main exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: code, Err: err}
}

// silentExit makes Main exit with code without printing anything more.
func silentExit(code int) error {
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code}
}

func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitToolError
}
