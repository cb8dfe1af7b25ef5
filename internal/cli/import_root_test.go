package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// karpenterNodePool is a Karpenter NodePool of GPU instances.
const karpenterNodePool = `apiVersion: karpenter.sh/v1
kind: NodePool
metadata:
  name: gpu
spec:
  template:
    spec:
      requirements:
      - key: node.kubernetes.io/instance-type
        operator: In
        values: [g6.xlarge]
`

// rootRepo is a folder holding .git with team/np.yaml, a link to
// common/np.yaml inside it.
func rootRepo(t *testing.T) (dir, link string) {
	t.Helper()
	dir = t.TempDir()
	for _, d := range []string{".git", "common", "team"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "common", "np.yaml"), []byte(karpenterNodePool), 0o644); err != nil {
		t.Fatal(err)
	}
	link = filepath.Join(dir, "team", "np.yaml")
	if err := os.Symlink("../common/np.yaml", link); err != nil {
		t.Fatal(err)
	}
	return dir, link
}

// TestImportRootFlag: --root on import and validate sets the folder
// everything is read inside: the repository by default (a link inside it
// is followed), a narrower --root refuses the link that leaves it, a PATH
// outside --root and a --root that is not a folder are usage errors (2)
// naming the flag.
func TestImportRootFlag(t *testing.T) {
	dir, link := rootRepo(t)
	team := filepath.Join(dir, "team")
	for _, cmd := range []string{"import", "validate"} {
		ok := []string{cmd, "--region", "us-east-1", "--cluster-name", "c", "--kubernetes-version", "1.33", link}
		streams, _, out, errOut := TestStreams()
		if code := Run(context.Background(), ok, streams); code != ExitOK && code != ExitCheckFailed {
			t.Fatalf("%s in the repository: exit %d: %s", cmd, code, errOut)
		}
		if out.Len() == 0 {
			t.Errorf("%s wrote nothing", cmd)
		}
		for _, c := range []struct {
			args []string
			want string
		}{
			{[]string{cmd, "--from", "karpenter", "--root", team, link}, "outside the folder gpuctl reads"},
			{[]string{cmd, "--from", "karpenter", "--root", team, filepath.Join(dir, "common", "np.yaml")}, "pass --root"},
			{[]string{cmd, "--root", filepath.Join(dir, "nope"), link}, "--root " + filepath.Join(dir, "nope") + ": not a folder"},
		} {
			streams, _, out, errOut := TestStreams()
			if code := Run(context.Background(), c.args, streams); code != ExitUsage {
				t.Errorf("%v: exit %d, want %d: %s", c.args, code, ExitUsage, errOut)
			}
			if !strings.Contains(errOut.String(), c.want) || out.Len() != 0 {
				t.Errorf("%v: stderr %q, want %q and no output (stdout %q)", c.args, errOut, c.want, out)
			}
		}
	}
	// Without --from, validate detects the kind inside --root too.
	streams, _, _, errOut := TestStreams()
	if code := Run(context.Background(), []string{"validate", "--root", team, filepath.Join(dir, "common", "np.yaml")}, streams); code != ExitUsage || !strings.Contains(errOut.String(), "pass --root") {
		t.Errorf("validate of a PATH outside --root: exit %d: %s", code, errOut)
	}
}

// TestImportValidateCancelled: import and validate of a folder stop on
// SIGINT or SIGTERM with 130 or 143 and write nothing on stdout.
func TestImportValidateCancelled(t *testing.T) {
	dir, link := rootRepo(t)
	for _, args := range [][]string{{"import", link}, {"import", "--from", "karpenter", filepath.Join(dir, "common")}, {"validate", link}} {
		for _, c := range []struct {
			sig  os.Signal
			code int
		}{{os.Interrupt, ExitInterrupted}, {syscall.SIGTERM, ExitTerminated}} {
			ctx, cancel := context.WithCancelCause(context.Background())
			cancel(&SignalError{Signal: c.sig})
			streams, _, out, errOut := TestStreams()
			if code := Run(ctx, args, streams); code != c.code {
				t.Errorf("%v after %v: exit %d, want %d: %s", args, c.sig, code, c.code, errOut)
			}
			if out.Len() != 0 || !strings.Contains(errOut.String(), "stopped, nothing more written") {
				t.Errorf("%v after %v: stdout %q, stderr %q", args, c.sig, out, errOut)
			}
		}
	}
}

// TestSignalSafetyNet: after a signal, Main returns 130 or 143 within
// signalGrace and a little even when the command does not return; accept,
// which deletes its Jobs first, is waited for however long it takes; a
// command that stops on its own returns its own code.
func TestSignalSafetyNet(t *testing.T) {
	hung := func(ctx context.Context, _ []string, _ *IOStreams) int {
		<-ctx.Done()
		time.Sleep(time.Minute) // a call that does not see the context
		return ExitOK
	}
	for _, c := range []struct {
		sig  os.Signal
		code int
		msg  string
	}{{os.Interrupt, ExitInterrupted, "interrupted by SIGINT"}, {syscall.SIGTERM, ExitTerminated, "interrupted by SIGTERM"}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		sigs := make(chan os.Signal, 1)
		sigs <- c.sig
		streams, _, _, errOut := TestStreams()
		start := time.Now()
		code := runUntilSignal(ctx, cancel, sigs, []string{"validate", "infra"}, streams, hung)
		if d := time.Since(start); code != c.code || d > signalGrace+500*time.Millisecond || d < signalGrace {
			t.Errorf("%v to a command that does not return: exit %d after %v, want %d after %v", c.sig, code, d, c.code, signalGrace)
		}
		if want := "error: " + c.msg; !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "stopped, nothing more written") {
			t.Errorf("%v: stderr %q, want %q", c.sig, errOut, want)
		}
		cancel(nil)
	}

	// accept cleans up: waited for past the grace
	var cleaned atomic.Bool
	cleanup := func(ctx context.Context, _ []string, _ *IOStreams) int {
		<-ctx.Done()
		time.Sleep(signalGrace + 300*time.Millisecond)
		cleaned.Store(true)
		return ExitInconclusive
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	streams, _, _, _ := TestStreams()
	if code := runUntilSignal(ctx, cancel, sigs, []string{"accept", "--node", "n"}, streams, cleanup); code != ExitInconclusive || !cleaned.Load() {
		t.Errorf("accept after SIGTERM: exit %d (cleaned up: %v), want its own %d after its cleanup", code, cleaned.Load(), ExitInconclusive)
	}

	// a command that stops on its own, and one that no signal reaches
	prompt := func(ctx context.Context, _ []string, _ *IOStreams) int {
		<-ctx.Done()
		return ExitTerminated
	}
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	defer cancel2(nil)
	sigs2 := make(chan os.Signal, 1)
	sigs2 <- syscall.SIGTERM
	streams, _, _, errOut := TestStreams()
	if code := runUntilSignal(ctx2, cancel2, sigs2, []string{"import", "x"}, streams, prompt); code != ExitTerminated || errOut.Len() != 0 {
		t.Errorf("a command that stops: exit %d, stderr %q", code, errOut)
	}
	quick := func(context.Context, []string, *IOStreams) int { return ExitCheckFailed }
	ctx3, cancel3 := context.WithCancelCause(context.Background())
	defer cancel3(nil)
	if code := runUntilSignal(ctx3, cancel3, make(chan os.Signal), []string{"validate", "x"}, streams, quick); code != ExitCheckFailed {
		t.Errorf("no signal: exit %d, want the command's %d", code, ExitCheckFailed)
	}
	for args, want := range map[string]string{"accept --node n": "accept", "--version": "", "-v accept": "accept", "-- accept": ""} {
		if got := commandOf(strings.Fields(args)); got != want {
			t.Errorf("commandOf(%q) = %q, want %q", args, got, want)
		}
	}
	for args, want := range map[string]time.Duration{"import x": signalGrace, "validate x": signalGrace, "report r": signalGrace,
		"accept --node n": noGraceLimit, "generate s --out d": 5 * time.Second} {
		if got := graceOf(strings.Fields(args)); got != want {
			t.Errorf("graceOf(%q) = %v, want %v", args, got, want)
		}
	}
}

// TestValidateFolderWithDeviceLink: validate of a folder whose YAML file
// is a link to /dev/zero says which file was refused (exit 2), instead of
// reading the folder as a spec; import says the same.
func TestValidateFolderWithDeviceLink(t *testing.T) {
	dir, _ := rootRepo(t)
	k := filepath.Join(dir, "k")
	if err := os.Mkdir(k, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(k, "zero.yaml")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"validate", k}, {"import", k}, {"import", "--from", "karpenter", k}} {
		streams, _, out, errOut := TestStreams()
		start := time.Now()
		if code := Run(context.Background(), args, streams); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d: %s", args, code, ExitUsage, errOut)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%v took %v", args, d)
		}
		if !strings.Contains(errOut.String(), link+": outside the folder gpuctl reads") || out.Len() != 0 {
			t.Errorf("%v: stderr %q, want the link named as refused; stdout %q", args, errOut, out)
		}
	}
}
