// Command acceptscale measures `gpuctl accept` over a fleet of kwok fake
// 8-GPU nodes on the local control plane that bench/accept-scale.sh starts:
// wall time, the slowest node, API requests per node-stage (from the API
// server's audit log, by gpuctl's user agent) and gpuctl's peak RSS.
//
// Usage (from bench/accept-scale.sh): acceptscale -gpuctl BIN -audit FILE -nodes 50,200,500 -parallel 100 -kcm 20/30
//
// On stderr it prints, per fleet, the requests of every client in the
// audit log during gpuctl's run and the busiest second of each: a
// controller manager at its client-side rate limit shows as a flat
// --kube-api-qps per second.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const namespace = "gpuctl-bench"

func main() {
	bin := flag.String("gpuctl", "", "gpuctl binary")
	audit := flag.String("audit", "", "the API server's audit log (JSON lines)")
	sizes := flag.String("nodes", "50,200", "fleet sizes, comma separated")
	parallel := flag.Int("parallel", 100, "gpuctl --parallel")
	stages := flag.String("stages", "kubernetes,inventory", "gpuctl --stages")
	kcm := flag.String("kcm", "20/30 (default)", "the controller manager's --kube-api-qps/--kube-api-burst, for the table")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		fail(err)
	}
	cfg.QPS, cfg.Burst = 200, 400
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}
	nStages := len(strings.Split(*stages, ","))
	fmt.Printf("| nodes | --parallel | controller-manager QPS/burst | wall | slowest node | single node alone | API requests per node-stage | peak RSS |\n|---|---|---|---|---|---|---|---|\n")
	have := 0
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			fail(err)
		}
		for i := have; i < n; i++ {
			if err := fakeNode(c, fmt.Sprintf("bench-%04d", i)); err != nil {
				fail(err)
			}
		}
		waitReady(c, n, false)
		// The device plugin pods once the nodes are Ready (kwok may miss a
		// pod bound to a node it has not seen yet).
		for ; have < n; have++ {
			if err := pluginPod(c, fmt.Sprintf("bench-%04d", have)); err != nil {
				fail(err)
			}
		}
		waitReady(c, n, true)
		single := runGpuctl(*bin, *audit, []string{"bench-0000"}, 1, *stages)
		r := runGpuctl(*bin, *audit, nil, *parallel, *stages)
		fmt.Printf("| %d | %d | %s | %.1f s | %.1f s | %.1f s | %.1f | %.0f MB |\n", n, *parallel, *kcm, r.wall.Seconds(), r.slowest, single.wall.Seconds(),
			float64(r.requests)/float64(n*nStages), float64(r.maxRSSKB)/1024)
		if r.code != 0 {
			fmt.Fprintf(os.Stderr, "acceptscale: gpuctl exited %d with %d nodes\n%s\n", r.code, n, r.tail)
		}
	}
}

type result struct {
	code     int
	wall     time.Duration
	slowest  float64
	requests int
	maxRSSKB int64
	tail     string
}

func runGpuctl(bin, audit string, nodes []string, parallel int, stages string) result {
	dir, err := os.MkdirTemp("", "acceptscale")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	args := append([]string{"accept"}, nodes...)
	if len(nodes) == 0 {
		args = append(args, "-l", "gpuctl-bench=true")
	}
	args = append(args, "-n", namespace, "--create-namespace", "--parallel", strconv.Itoa(parallel), "--stages", stages,
		"--evidence-dir", dir, "--fleet-summary", filepath.Join(dir, "fleet.json"), "--stage-timeout", "300s", "-q")
	cmd := exec.Command(bin, args...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	time.Sleep(1100 * time.Millisecond) // audit timestamps have microseconds; keep runs apart
	start := time.Now()
	err = cmd.Run()
	r := result{wall: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		fail(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		r.maxRSSKB = ru.Maxrss
	}
	if t := errOut.String(); len(t) > 2000 {
		r.tail = t[len(t)-2000:]
	} else {
		r.tail = t
	}
	if b, err := os.ReadFile(filepath.Join(dir, "fleet.json")); err == nil {
		var f struct {
			SlowestSeconds float64 `json:"slowestSeconds"`
		}
		_ = json.Unmarshal(b, &f)
		r.slowest = f.SlowestSeconds
	} else {
		r.slowest = r.wall.Seconds()
	}
	time.Sleep(2 * time.Second) // the audit backend flushes in batches
	var agents map[string]*agentCount
	r.requests, agents = countRequests(audit, start, start.Add(r.wall))
	names := make([]string, 0, len(agents))
	for a := range agents {
		names = append(names, a)
	}
	sort.Slice(names, func(i, j int) bool { return agents[names[i]].total > agents[names[j]].total })
	what := strings.Join(nodes, " ")
	if what == "" {
		what = "the fleet"
	}
	fmt.Fprintf(os.Stderr, "acceptscale: %s, %.1f s: requests by client (total, busiest second):\n", what, r.wall.Seconds())
	for _, a := range names {
		c := agents[a]
		peak := 0
		for _, n := range c.perSecond {
			peak = max(peak, n)
		}
		fmt.Fprintf(os.Stderr, "  %-50s %6d %4d/s\n", a, c.total, peak)
	}
	return r
}

type agentCount struct {
	total     int
	perSecond map[int64]int
}

// countRequests counts the audit events of gpuctl's requests received in
// [from, to]: one per request (stage ResponseComplete, or ResponseStarted
// for a watch that outlived the run). It also counts every client's
// requests, by user agent (a controller manager's controller by the name
// at the agent's end), in total and per second.
func countRequests(path string, from, to time.Time) (int, map[string]*agentCount) {
	f, err := os.Open(path)
	if err != nil {
		fail(err)
	}
	defer f.Close()
	seen, all := map[string]bool{}, map[string]bool{}
	agents := map[string]*agentCount{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			AuditID   string    `json:"auditID"`
			UserAgent string    `json:"userAgent"`
			Received  time.Time `json:"requestReceivedTimestamp"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Received.Before(from) || ev.Received.After(to) || all[ev.AuditID] {
			continue
		}
		all[ev.AuditID] = true
		agent, _, _ := strings.Cut(ev.UserAgent, "/")
		if agent == "kube-controller-manager" {
			agent += "/" + ev.UserAgent[strings.LastIndex(ev.UserAgent, "/")+1:]
		}
		c := agents[agent]
		if c == nil {
			c = &agentCount{perSecond: map[int64]int{}}
			agents[agent] = c
		}
		c.total++
		c.perSecond[ev.Received.Unix()]++
		if strings.HasPrefix(ev.UserAgent, "gpuctl/") {
			seen[ev.AuditID] = true
		}
	}
	return len(seen), agents
}

func fakeNode(c kubernetes.Interface, name string) error {
	ctx := context.Background()
	q := resource.MustParse("8")
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
			Labels: map[string]string{"kubernetes.io/hostname": name, "type": "kwok", "gpuctl-bench": "true",
				"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/gpu.count": "8",
				"nvidia.com/cuda.runtime-version.major": "12", "nvidia.com/cuda.runtime-version.minor": "2"}},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": q},
			Allocatable: corev1.ResourceList{"cpu": resource.MustParse("64"), "memory": resource.MustParse("512Gi"), "pods": resource.MustParse("110"), "nvidia.com/gpu": q},
		},
	}
	_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	return err
}

func pluginPod(c kubernetes.Interface, name string) error {
	ctx := context.Background()
	f := false
	plugin := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "nvidia-device-plugin-" + name, Namespace: "kube-system", Labels: map[string]string{"app": "nvidia-device-plugin-daemonset"}},
		Spec: corev1.PodSpec{NodeName: name, AutomountServiceAccountToken: &f,
			Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists}},
			Containers:  []corev1.Container{{Name: "plugin", Image: "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"}}},
	}
	_, err := c.CoreV1().Pods("kube-system").Create(ctx, plugin, metav1.CreateOptions{})
	return err
}

// waitReady waits until n bench nodes are Ready (and, with plugins, their
// device plugin pods Running; one still Pending after 30 s is made anew).
func waitReady(c kubernetes.Interface, n int, plugins bool) {
	ctx := context.Background()
	end := time.Now().Add(10 * time.Minute)
	retryAt := time.Now().Add(30 * time.Second)
	for time.Now().Before(end) {
		nodes, err1 := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "gpuctl-bench=true"})
		pods, err2 := c.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "app=nvidia-device-plugin-daemonset"})
		if err1 == nil && err2 == nil {
			ready, running := 0, 0
			for _, no := range nodes.Items {
				for _, cond := range no.Status.Conditions {
					if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
						ready++
					}
				}
			}
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
			if ready >= n && (!plugins || running >= n) {
				return
			}
			if plugins && time.Now().After(retryAt) {
				retryAt = time.Now().Add(30 * time.Second)
				for _, p := range pods.Items {
					if p.Status.Phase == corev1.PodPending {
						zero := int64(0)
						_ = c.CoreV1().Pods("kube-system").Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
						time.Sleep(time.Second)
						_ = pluginPod(c, p.Spec.NodeName)
					}
				}
			}
		}
		time.Sleep(time.Second)
	}
	fail(fmt.Errorf("%d nodes not Ready after 10 minutes", n))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "acceptscale:", err)
	os.Exit(1)
}
