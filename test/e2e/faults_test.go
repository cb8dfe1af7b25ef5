//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gpuctl/gpuctl/internal/accept"
	"github.com/gpuctl/gpuctl/internal/diag"
)

// The fault scenarios run in parallel, each in its own namespace and on its
// own node, with a 60 s stage timeout: each must end well before it.
const faultStageTimeout = 60 * time.Second

// started runs gpuctl in the background; wait returns its result.
type started struct {
	cmd           *exec.Cmd
	out, errOut   bytes.Buffer
	start         time.Time
	t             *testing.T
	args          []string
	alreadyWaited bool
}

func gpuctlStart(t *testing.T, args ...string) *started {
	t.Helper()
	s := &started{t: t, args: args}
	s.cmd = exec.Command(gpuctl, args...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.errOut
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !s.alreadyWaited {
			_ = s.cmd.Process.Kill()
			_ = s.cmd.Wait()
		}
	})
	return s
}

func (s *started) wait() run {
	s.t.Helper()
	err := s.cmd.Wait()
	s.alreadyWaited = true
	r := run{stdout: s.out.String(), stderr: s.errOut.String(), dur: time.Since(s.start)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		s.t.Fatal(err)
	}
	s.t.Logf("gpuctl %s -> exit %d in %s\n%s", strings.Join(s.args, " "), r.code, r.dur.Round(time.Millisecond), r.stderr)
	return r
}

// probePod waits until the stage's probe pod of gpuctl is Running in ns.
func probePod(t *testing.T, ns string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, 60*time.Second, "a probe pod Running in "+ns, func() bool {
		pods, err := client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: accept.LabelManagedBy + "=" + accept.ManagedBy})
		if err != nil || len(pods.Items) == 0 || pods.Items[0].Status.Phase != corev1.PodRunning {
			return false
		}
		pod = &pods.Items[0]
		return true
	})
	return pod
}

// assertNoLiveLeftovers: no Job or pod of gpuctl without a deletionTimestamp
// remains in ns.
func assertNoLiveLeftovers(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	sel := accept.LabelManagedBy + "=" + accept.ManagedBy
	jobs, err := client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	pods, err := client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, j := range jobs.Items {
		if j.DeletionTimestamp == nil {
			n++
		}
	}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			n++
		}
	}
	if n > 0 {
		t.Errorf("left behind in %s: %d objects without deletionTimestamp (%d jobs, %d pods)", ns, n, len(jobs.Items), len(pods.Items))
	}
}

// wantStage checks one stage's verdict, cause and reason.
func wantStage(t *testing.T, p *accept.Predicate, st accept.Stage, v diag.Verdict, cause, reason string) {
	t.Helper()
	s := stage(p, st)
	if s.Verdict != v || s.Cause != cause || !strings.Contains(s.Reason, reason) {
		t.Errorf("%s: %s (cause %q) %q, want %s (cause %q) with %q", st, s.Verdict, s.Cause, s.Reason, v, cause, reason)
	}
}

func faultRun(t *testing.T, node, ns string, extra ...string) *started {
	args := append([]string{"accept", node, "-n", ns, "--create-namespace", "--evidence-dir", t.TempDir(), "-o", "json",
		"--stage-timeout", faultStageTimeout.String()}, extra...)
	return gpuctlStart(t, args...)
}

func beforeTimeout(t *testing.T, r run) {
	t.Helper()
	if r.dur >= faultStageTimeout {
		t.Errorf("took %s: the verdict must come before the stage timeout %s", r.dur, faultStageTimeout)
	}
}

// TestFaults: the faults operators meet, each in its own namespace, in
// parallel: the right verdict and cause, before the stage timeout, and no
// object of gpuctl left behind.
func TestFaults(t *testing.T) {
	// Someone else deletes the probe's Job, or its pod, mid-stage.
	for _, tc := range []struct {
		name, ns string
		del      func(ns string, pod *corev1.Pod) error
		want     string
	}{
		{"job deleted by someone else", "e2e-jobdel", func(ns string, pod *corev1.Pod) error {
			job := pod.Labels["batch.kubernetes.io/job-name"]
			if job == "" {
				job = pod.Labels["job-name"]
			}
			return client.BatchV1().Jobs(ns).Delete(context.Background(), job, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
		}, "was deleted by someone else"},
		{"pod deleted by someone else", "e2e-poddel", func(ns string, pod *corev1.Pod) error {
			return client.CoreV1().Pods(ns).Delete(context.Background(), pod.Name, metav1.DeleteOptions{})
		}, "deleted by someone else"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			node, ns := tc.ns, tc.ns
			fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
			s := faultRun(t, node, ns, "--stages", "inventory")
			pod := probePod(t, ns)
			if err := tc.del(ns, pod); err != nil {
				t.Fatal(err)
			}
			r := s.wait()
			if r.code != 4 {
				t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
			}
			beforeTimeout(t, r)
			_, p := predicateUnsigned(t, r.stdout)
			wantStage(t, p, accept.StageInventory, diag.Inconclusive, accept.CauseCluster, tc.want)
			assertNoLiveLeftovers(t, ns)
		})
	}
	t.Run("node deleted mid-run", func(t *testing.T) {
		t.Parallel()
		const node, ns = "e2e-nodedel", "e2e-nodedel"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		// The node Job runs inventory, topology, cuda and nccl; kwok ends its
		// init containers (all but nccl's all-reduce) at once and keeps the
		// last one running on this node: nccl is the stage under way when
		// the node goes, and no Job is created after it (stopping the stages
		// after a deleted node is the unit tests' TestRunNodeGoneStops).
		s := faultRun(t, node, ns, "--stages", "kubernetes,inventory,topology,cuda,nccl")
		probePod(t, ns)
		if err := client.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		r := s.wait()
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
		}
		beforeTimeout(t, r)
		_, p := predicateUnsigned(t, r.stdout)
		wantStage(t, p, accept.StageInventory, diag.Pass, accept.CauseNode, "8 x NVIDIA H100 80GB HBM3")
		wantStage(t, p, accept.StageCUDA, diag.Pass, accept.CauseNode, "")
		wantStage(t, p, accept.StageNCCL, diag.Inconclusive, accept.CauseCluster, "node e2e-nodedel was deleted during the stage")
		assertNoLiveLeftovers(t, ns)
	})
	t.Run("GPUs held by another pod", func(t *testing.T) {
		t.Parallel()
		const node, ns = "e2e-busy", "e2e-busy"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		holder := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "training-0", Namespace: "default"},
			Spec: corev1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr(false),
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
				Containers: []corev1.Container{{Name: "train", Image: "train:1", Resources: corev1.ResourceRequirements{
					Limits: corev1.ResourceList{accept.ResourceGPU: resource.MustParse("8")}}}}},
		}
		if _, err := client.CoreV1().Pods("default").Create(context.Background(), holder, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = client.CoreV1().Pods("default").Delete(context.Background(), holder.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr(int64(0))})
		})
		eventually(t, 30*time.Second, "the training pod Running", func() bool {
			p, err := client.CoreV1().Pods("default").Get(context.Background(), holder.Name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning
		})
		r := faultRun(t, node, ns).wait()
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
		}
		beforeTimeout(t, r)
		_, p := predicateUnsigned(t, r.stdout)
		wantStage(t, p, accept.StageKubernetes, diag.Inconclusive, accept.CauseCluster, "GPUs in use by default/training-0 (8)")
		for _, st := range []accept.Stage{accept.StageInventory, accept.StageTopology, accept.StageCUDA, accept.StageNCCL} {
			if s := stage(p, st); s.Verdict != diag.Skipped {
				t.Errorf("%s ran although other pods hold the GPUs: %s %q", st, s.Verdict, s.Reason)
			}
		}
		jobs, err := client.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(jobs.Items) != 0 {
			t.Errorf("Jobs were created on a node whose GPUs are held: %v %d", err, len(jobs.Items))
		}
	})
	t.Run("RBAC without delete and pods/log", func(t *testing.T) {
		t.Parallel()
		const node, ns = "e2e-rbac", "e2e-rbac"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		kubeconfig := limitedIdentity(t, ns, []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch", "delete"}},
		})
		r := gpuctlRunEnv(t, []string{"KUBECONFIG=" + kubeconfig}, "accept", node, "-n", ns, "--evidence-dir", t.TempDir(), "-o", "json",
			"--stage-timeout", faultStageTimeout.String(), "--stages", "kubernetes,inventory,topology")
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE)", r.code)
		}
		if r.dur > 15*time.Second {
			t.Errorf("took %s: missing permissions must fail fast", r.dur)
		}
		_, p := predicateUnsigned(t, r.stdout)
		wantStage(t, p, accept.StageKubernetes, diag.Pass, accept.CauseNode, "node Ready")
		wantStage(t, p, accept.StageInventory, diag.Inconclusive, accept.CauseCluster, "delete jobs.batch in namespace e2e-rbac")
		wantStage(t, p, accept.StageInventory, diag.Inconclusive, accept.CauseCluster, "get pods/log in namespace e2e-rbac")
		if s := stage(p, accept.StageTopology); s.Verdict != diag.Skipped {
			t.Errorf("topology: %s, want SKIPPED", s.Verdict)
		}
		jobs, err := client.BatchV1().Jobs(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil || len(jobs.Items) != 0 {
			t.Errorf("Jobs created without the permission to delete them: %v %d", err, len(jobs.Items))
		}
	})
	// Without list and watch on Jobs and pods no watch is started (its
	// informer would wait for a list the API server refuses): the Job
	// stages end INCONCLUSIVE naming the verbs and the record is written
	// (before, the run waited 60 s and ended as a tool error, exit 1).
	t.Run("RBAC without list and watch", func(t *testing.T) {
		t.Parallel()
		const node, ns = "e2e-rbac-watch", "e2e-rbac-watch"
		fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
		kubeconfig := limitedIdentity(t, ns, []rbacv1.PolicyRule{
			{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "get", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "delete"}},
			{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
		})
		dir := t.TempDir()
		r := gpuctlRunEnv(t, []string{"KUBECONFIG=" + kubeconfig}, "accept", node, "-n", ns, "--evidence-dir", dir, "-o", "json",
			"--stage-timeout", faultStageTimeout.String(), "--stages", "kubernetes,inventory,topology")
		if r.code != 4 {
			t.Fatalf("exit %d, want 4 (INCONCLUSIVE): %s", r.code, r.stderr)
		}
		t.Logf("the denied run took %s", r.dur)
		_, p := predicateUnsigned(t, r.stdout)
		// (list pods comes cluster-wide from the ClusterRole, for the
		// kubernetes stage.)
		for _, verb := range []string{"list jobs.batch in namespace " + ns, "watch jobs.batch in namespace " + ns, "watch pods in namespace " + ns} {
			wantStage(t, p, accept.StageInventory, diag.Inconclusive, accept.CauseCluster, verb)
		}
		if s := stage(p, accept.StageTopology); s.Verdict != diag.Skipped {
			t.Errorf("topology: %s, want SKIPPED", s.Verdict)
		}
		recs, _ := filepath.Glob(filepath.Join(dir, node, "*", "statement.intoto.json"))
		if len(recs) != 1 {
			t.Errorf("records written: %v, want one (unsigned: no --key)", recs)
		}
	})
}

// limitedIdentity makes a ServiceAccount in ns with the RBAC of docs/accept.md
// whose Role has only rules, and returns a kubeconfig with its token.
func limitedIdentity(t *testing.T, ns string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "limited", Namespace: ns}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role, cr := accept.BuildRBAC(ns)
	role.Rules = rules
	cr.Name = "gpuctl-accept-" + ns
	if _, err := client.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, cr, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoles().Delete(context.Background(), cr.Name, metav1.DeleteOptions{})
	})
	subj := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}}
	if _, err := client.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "limited"}, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: role.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: cr.Name}, Subjects: subj,
		RoleRef: rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: cr.Name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.RbacV1().ClusterRoleBindings().Delete(context.Background(), cr.Name, metav1.DeleteOptions{})
	})
	return kubeconfigFor(t, ns, sa.Name)
}

// kubeconfigFor writes a copy of the test cluster's kubeconfig that
// authenticates as ServiceAccount ns/name (an hour's token) and returns its
// path.
func kubeconfigFor(t *testing.T, ns, name string) string {
	t.Helper()
	tok, err := client.CoreV1().ServiceAccounts(ns).CreateToken(context.Background(), name, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: ptr(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.LoadFromFile(os.Getenv("KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range cfg.AuthInfos {
		u.Token = tok.Status.Token
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func gpuctlRunEnv(t *testing.T, env []string, args ...string) run {
	t.Helper()
	s := &started{t: t, args: args}
	s.cmd = exec.Command(gpuctl, args...)
	s.cmd.Env = append(os.Environ(), env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.errOut
	s.start = time.Now()
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return s.wait()
}

// TestAPIServerRestart: kube-apiserver is killed (SIGKILL) 3 s into the
// inventory stage and started again 3 s later; gpuctl does not crash, its watches
// resume, the run goes on to a PASS and leaves nothing behind. It runs
// alone (not in parallel): every client of the control plane sees the
// restart.
func TestAPIServerRestart(t *testing.T) {
	state := os.Getenv("E2E_STATE")
	if state == "" {
		t.Fatal("E2E_STATE not set; run hack/e2e.sh")
	}
	const node, ns = "e2e-restart", "e2e-restart"
	fakeGPUNode(t, node, "NVIDIA-H100-80GB-HBM3", 8, "12.2")
	s := faultRun(t, node, ns, "--stages", "kubernetes,inventory")
	probePod(t, ns)
	time.Sleep(3 * time.Second)
	restartAPIServer(t, state, 3*time.Second)
	r := s.wait()
	if strings.Contains(r.stderr, "panic") {
		t.Fatalf("gpuctl panicked:\n%s", r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("exit %d, want 0 (PASS)", r.code)
	}
	_, p := predicateUnsigned(t, r.stdout)
	wantStage(t, p, accept.StageInventory, diag.Pass, accept.CauseNode, "8 x NVIDIA H100 80GB HBM3")
	assertNoLiveLeftovers(t, ns)
}

// restartAPIServer stops the control plane's kube-apiserver, waits down,
// and starts it again with the same command line, then waits until ready.
func restartAPIServer(t *testing.T, state string, down time.Duration) {
	t.Helper()
	pidFile := filepath.Join(state, "pids", "kube-apiserver.pid")
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		t.Fatal(err)
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	// Killed, as a crashed or OOM-killed API server is.
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "kube-apiserver "+strconv.Itoa(pid)+" stopped ("+procState(pid)+")", func() bool { return !alive(pid) })
	time.Sleep(down)
	logf, err := os.OpenFile(filepath.Join(state, "logs", "kube-apiserver.log"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait() }()
	eventually(t, 90*time.Second, "kube-apiserver ready again", func() bool {
		body, err := client.CoreV1().RESTClient().Get().AbsPath("/readyz").DoRaw(context.Background())
		return err == nil && strings.TrimSpace(string(body)) == "ok"
	})
}

func procState(pid int) string {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return strings.TrimSpace(string(b))
}

// alive reports whether pid runs (a zombie, which nobody may reap here,
// does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
