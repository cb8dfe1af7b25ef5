package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/probe"
	"github.com/gpuctl/gpuctl/internal/safefs"
)

// preflightSource gives the outputs of a preflight stage, named as the
// stage's Job containers are (accept.Judge reads them so), or why the stage
// is SKIPPED. gpus is how many GPUs the CUDA sample runs on (0: unknown).
// A tool that could not run is out.Harness (INCONCLUSIVE).
type preflightSource interface {
	stage(ctx context.Context, st accept.Stage, gpus int) (out accept.StageOutput, skip string)
}

// dirSource reads saved outputs from a directory (--from-dir), each inside
// it (safefs.OpenRoot) and at most probe.MaxInputBytes.
type dirSource struct {
	root *safefs.Root
	dir  string
}

func openDirSource(dir string) (*dirSource, error) {
	root, err := safefs.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &dirSource{root: root, dir: dir}, nil
}

func (d *dirSource) close() { _ = d.root.Close() }

// The files --from-dir reads, by stage: the first of each list that is
// there is the container's log.
var preflightFiles = map[accept.Stage][]struct{ container, file string }{
	accept.StageInventory: {
		{accept.ContainerSMIQuery, "nvidia-smi-q.xml"}, {accept.ContainerSMIQuery, "nvidia-smi-q.txt"}, {accept.ContainerNVML, "nvml.json"},
	},
	accept.StageTopology: {{accept.ContainerSMITopo, "topo.txt"}},
}

// nvlinkFile is the optional nvidia-smi nvlink -s output of --from-dir.
const nvlinkFile = "nvidia-smi-nvlink.txt"

// evidenceFile is the --from-dir name of container c's log, as a live run
// reads it (nvidia-smi -q -x: XML), so that --evidence-dir's folder can be
// judged again with --from-dir.
func evidenceFile(c string) string {
	switch c {
	case accept.ContainerSMIQuery:
		return "nvidia-smi-q.xml"
	case accept.ContainerNVML:
		return "nvml.json"
	case accept.ContainerSMINVLink:
		return nvlinkFile
	case accept.ContainerSMITopo:
		return "topo.txt"
	}
	return c + ".txt" // vectoradd-I
}

func (d *dirSource) stage(_ context.Context, st accept.Stage, gpus int) (accept.StageOutput, string) {
	if st == accept.StageCUDA {
		return d.cuda(gpus)
	}
	out := accept.StageOutput{Logs: map[string][]byte{}}
	var names []string
	for _, f := range preflightFiles[st] {
		names = append(names, f.file)
		data, err := d.read(f.file)
		if err == nil {
			out.Logs[f.container] = data
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			out.Harness = err.Error()
			return out, ""
		}
	}
	if len(out.Logs) == 0 {
		out.Harness = fmt.Sprintf("%s has no %s", d.dir, strings.Join(names, " or "))
		return out, ""
	}
	if st == accept.StageInventory && out.Logs[accept.ContainerSMIQuery] != nil {
		if data, err := d.read(nvlinkFile); err == nil {
			out.Logs[accept.ContainerSMINVLink] = data
		}
	}
	return out, ""
}

// cuda reads vectoradd-I.txt for each of the gpus GPUs, else vectoradd.txt
// as GPU 0's run; SKIPPED when there is neither.
func (d *dirSource) cuda(gpus int) (accept.StageOutput, string) {
	out := accept.StageOutput{Logs: map[string][]byte{}}
	for i := 0; i < max(gpus, 1); i++ {
		if data, err := d.read(fmt.Sprintf("vectoradd-%d.txt", i)); err == nil {
			out.Logs[accept.CUDAContainer(i)] = data
		}
	}
	if len(out.Logs) > 0 {
		return out, ""
	}
	data, err := d.read("vectoradd.txt")
	if err != nil {
		return out, fmt.Sprintf("%s has no vectoradd.txt or vectoradd-0.txt: the CUDA sample was not run", d.dir)
	}
	out.Logs[accept.CUDAContainer(0)] = data
	return out, ""
}

func (d *dirSource) read(name string) ([]byte, error) {
	return d.root.ReadFile(name, toolOutput)
}

// liveSource runs the tools on this machine.
type liveSource struct {
	o *preflightOptions
}

func (l *liveSource) stage(ctx context.Context, st accept.Stage, gpus int) (accept.StageOutput, string) {
	switch st {
	case accept.StageInventory:
		return l.inventory(ctx), ""
	case accept.StageTopology:
		return l.tools(ctx, nil, accept.ContainerSMITopo, "nvidia-smi", "topo", "-m"), ""
	}
	return l.cuda(ctx, gpus)
}

// inventory reads NVML when this gpuctl has it and the driver's library
// loads, else runs nvidia-smi -q -x and nvidia-smi nvlink -s.
func (l *liveSource) inventory(ctx context.Context) accept.StageOutput {
	if out, ok := l.nvml(ctx); ok {
		return out
	}
	out := l.tools(ctx, nil, accept.ContainerSMIQuery, "nvidia-smi", "-q", "-x")
	if out.Harness == "" {
		nl := l.tools(ctx, nil, accept.ContainerSMINVLink, "nvidia-smi", "nvlink", "-s")
		for c, log := range nl.Logs {
			out.Logs[c], out.ExitCode[c] = log, nl.ExitCode[c]
		}
	}
	return out
}

// nvml is the NVML report of the pod's GPUs as gpuctl probe nvml -o json
// prints it; ok false when NVML is not compiled in or does not load.
func (l *liveSource) nvml(ctx context.Context) (accept.StageOutput, bool) {
	p, err := l.o.tools.newProber()
	if err != nil {
		return accept.StageOutput{}, false
	}
	rep, err := p.Probe(ctx)
	switch {
	case errors.Is(err, probe.ErrNVMLUnavailable), errors.Is(err, probe.ErrNVMLNotCompiled):
		return accept.StageOutput{}, false
	case err != nil:
		return accept.StageOutput{Harness: "NVML: " + err.Error()}, true
	}
	data, err := json.Marshal(l.o.visible.OnlyGiven(rep))
	if err != nil {
		return accept.StageOutput{Harness: "NVML report: " + err.Error()}, true
	}
	return accept.StageOutput{Logs: map[string][]byte{accept.ContainerNVML: data}}, true
}

// cuda runs the sample once on every GPU, CUDA_VISIBLE_DEVICES numbering
// them in PCI bus order as nvidia-smi does (accept's cuda stage does the
// same; the CUDA C++ Programming Guide, "CUDA Environment Variables",
// https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#env-vars,
// read 2026-12-02).
func (l *liveSource) cuda(ctx context.Context, gpus int) (accept.StageOutput, string) {
	bin := l.o.cudaSample
	if bin == "" {
		path, err := l.o.tools.lookPath("vectorAdd")
		if err != nil {
			return accept.StageOutput{}, "no vectorAdd on PATH and no --cuda-sample: the CUDA sample was not run"
		}
		bin = path
	}
	out := accept.StageOutput{Logs: map[string][]byte{}, ExitCode: map[string]int32{}}
	for i := 0; i < max(gpus, 1); i++ {
		env := []string{"CUDA_VISIBLE_DEVICES=" + strconv.Itoa(i), "CUDA_DEVICE_ORDER=PCI_BUS_ID"}
		r := l.tools(ctx, env, accept.CUDAContainer(i), bin)
		if r.Harness != "" {
			return r, ""
		}
		for c, log := range r.Logs {
			out.Logs[c], out.ExitCode[c] = log, r.ExitCode[c]
		}
	}
	return out, ""
}

// tools runs one tool as container c's log; a tool missing from PATH or
// that could not run is the harness's problem (INCONCLUSIVE).
func (l *liveSource) tools(ctx context.Context, env []string, c, name string, args ...string) accept.StageOutput {
	cmdline := strings.Join(append([]string{name}, args...), " ")
	if !strings.Contains(name, "/") {
		path, err := l.o.tools.lookPath(name)
		if err != nil {
			return accept.StageOutput{Harness: fmt.Sprintf("%s: %s %v", cmdline, name, errToolMissing)}
		}
		name = path
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.toolTimeout)
	defer cancel()
	data, code, err := l.o.tools.run(ctx, env, name, args...)
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return accept.StageOutput{Harness: fmt.Sprintf("%s did not end within --tool-timeout %s", cmdline, l.o.toolTimeout)}
	case err != nil:
		return accept.StageOutput{Harness: fmt.Sprintf("%s: %v", cmdline, err)}
	}
	return accept.StageOutput{Logs: map[string][]byte{c: data}, ExitCode: map[string]int32{c: int32(code)}}
}

// runTool runs name and returns its stdout and stderr together (at most
// probe.MaxInputBytes: more is an error) and its exit code.
func runTool(ctx context.Context, env []string, name string, args ...string) ([]byte, int, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var buf cappedBuffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if buf.over {
		return nil, 0, fmt.Errorf("printed more than %d bytes", probe.MaxInputBytes)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ctx.Err() == nil {
		return buf.Bytes(), ee.ExitCode(), nil
	}
	return buf.Bytes(), 0, err
}

func execLookPath(name string) (string, error) { return exec.LookPath(name) }

// cappedBuffer keeps at most probe.MaxInputBytes and says whether more
// came.
type cappedBuffer struct {
	bytes.Buffer
	over bool
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := probe.MaxInputBytes - b.Len(); len(p) > room {
		b.over = true
		p = p[:max(room, 0)]
	}
	b.Buffer.Write(p)
	return len(p), nil
}
