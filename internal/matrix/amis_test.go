package matrix

import (
	"testing"

	"github.com/gpuctl/gpuctl/internal/spec"
)

func TestParseReleaseVersion(t *testing.T) {
	v, err := ParseReleaseVersion("AL2023_x86_64_NVIDIA", "1.34.2-20251209")
	if err != nil || v.Kubernetes != "1.34" || v.Date.Format("2006-01-02") != "2025-12-09" {
		t.Fatalf("AL2023: %+v, %v", v, err)
	}
	b, err := ParseReleaseVersion("BOTTLEROCKET_x86_64_NVIDIA", "1.54.0-5043decc")
	if err != nil || b.OS.String() != "1.54.0" || b.Kubernetes != "" {
		t.Fatalf("Bottlerocket: %+v, %v", b, err)
	}
	for _, bad := range []struct{ ami, rv string }{
		{"AL2023_x86_64_NVIDIA", "1.54.0-5043decc"},
		{"AL2023_x86_64_NVIDIA", "1.34-20251209"},
		{"AL2023_x86_64_NVIDIA", "1.34.2-20251399"},
		{"BOTTLEROCKET_x86_64_NVIDIA", "1.54.0"},
	} {
		if _, err := ParseReleaseVersion(bad.ami, bad.rv); err == nil {
			t.Errorf("%s %s: no error", bad.ami, bad.rv)
		}
	}
}

func TestLookupAMIRelease(t *testing.T) {
	cases := []struct {
		ami, rv string
		want    ReleaseStatus
		driver  string
	}{
		// v20251209's notes: 1.34.2-20251209, kmod-nvidia-latest-dkms 580.105.08.
		{"AL2023_x86_64_NVIDIA", "1.34.2-20251209", ReleaseKnown, "580.105.08"},
		{"AL2023_ARM_64_NVIDIA", "1.34.2-20251209", ReleaseKnown, "580.105.08"},
		// AL2's final release: 1.32.9-20251209 with 570.172.08.
		{"AL2_x86_64_GPU", "1.32.9-20251209", ReleaseKnown, "570.172.08"},
		// v20260714: 580.159.03 on 1.35.
		{"AL2023_x86_64_NVIDIA", "1.35.6-20260714", ReleaseKnown, "580.159.03"},
		// a wrong patch on a release date the table has
		{"AL2023_x86_64_NVIDIA", "1.34.1-20251209", ReleaseNoSuch, ""},
		// a date with no tag at all, inside the range
		{"AL2023_x86_64_NVIDIA", "1.34.2-20251211", ReleaseNoSuch, ""},
		// an abandoned release (v20260311)
		{"AL2023_x86_64_NVIDIA", "1.35.2-20260311", ReleaseNoSuch, ""},
		// a tag without release notes (v20260512)
		{"AL2023_x86_64_NVIDIA", "1.35.4-20260512", ReleaseUnlisted, ""},
		{"AL2023_x86_64_NVIDIA", "1.36.3-20261120", ReleaseNewer, ""},
		{"AL2023_x86_64_NVIDIA", "1.31.0-20240101", ReleaseOlder, ""},
		{"AL2023_x86_64_STANDARD", "1.34.2-20251209", ReleaseNotTabled, ""},
		// bottlerocket.dev 1.49.0: aws-k8s-1.34-nvidia 580.95.05
		{"BOTTLEROCKET_x86_64_NVIDIA", "1.49.0-abcdef12", ReleaseKnown, ""},
		{"BOTTLEROCKET_x86_64_NVIDIA", "1.49.1-abcdef12", ReleaseUnlisted, ""},
		{"BOTTLEROCKET_x86_64_NVIDIA", "1.70.0-abcdef12", ReleaseNewer, ""},
		{"BOTTLEROCKET_x86_64_NVIDIA", "1.20.0-abcdef12", ReleaseOlder, ""},
	}
	for _, c := range cases {
		got := LookupAMIRelease(c.ami, c.rv)
		if got.Status != c.want {
			t.Errorf("%s %s: status %d, want %d", c.ami, c.rv, got.Status, c.want)
			continue
		}
		if c.driver != "" && (len(got.Releases) != 1 || got.Releases[0].Driver != c.driver) {
			t.Errorf("%s %s: releases %+v, want one with driver %s", c.ami, c.rv, got.Releases, c.driver)
		}
	}
	br := LookupAMIRelease("BOTTLEROCKET_x86_64_NVIDIA", "1.49.0-abcdef12")
	found := false
	for _, r := range br.Releases {
		if r.Kubernetes == "1.34" {
			found = r.Driver == "580.95.05"
		}
	}
	if !found {
		t.Errorf("Bottlerocket 1.49.0 on 1.34: want 580.95.05 in %+v", br.Releases)
	}
	if ns := LookupAMIRelease("AL2023_x86_64_NVIDIA", "1.34.1-20251209"); len(ns.Releases) == 0 || ns.Releases[0].Date != "2025-12-09" {
		t.Errorf("no such release: want the releases of its date, got %+v", ns.Releases)
	}
}

func TestAMIReleasesWithDriver(t *testing.T) {
	rs := AMIReleasesWithDriver("AL2023_x86_64_NVIDIA", "580.95.05", "1.34", 3)
	if len(rs) == 0 || len(rs) > 3 {
		t.Fatalf("580.95.05 on 1.34: %d releases", len(rs))
	}
	for i, r := range rs {
		if r.Driver != "580.95.05" || r.Kubernetes != "1.34" {
			t.Errorf("row %d: %+v", i, r)
		}
		if i > 0 && rs[i-1].Date < r.Date {
			t.Errorf("not newest first: %s before %s", rs[i-1].Date, r.Date)
		}
	}
	if rs := AMIReleasesWithDriver("AL2023_x86_64_NVIDIA", "470.256.02", "", 0); len(rs) != 0 {
		t.Errorf("470.256.02: want none, got %d", len(rs))
	}
}

func TestNewestAMIReleases(t *testing.T) {
	rs := NewestAMIReleases("AL2023_x86_64_NVIDIA")
	if len(rs) == 0 || rs[0].Kubernetes != "1.36" || rs[0].Release != "1.36.2-20260714" {
		t.Fatalf("newest: %+v", rs)
	}
	for i := 1; i < len(rs); i++ {
		if !MustVersion(rs[i].Kubernetes).Less(MustVersion(rs[i-1].Kubernetes)) {
			t.Errorf("minors not descending at %d", i)
		}
	}
	al2 := NewestAMIReleases("AL2_x86_64_GPU")
	if len(al2) == 0 || al2[0].Release != "1.32.9-20251209" {
		t.Errorf("AL2 final: %+v", al2)
	}
}

// TestPoolDriverFromRelease: a pool that pins a release the table knows
// runs that release's driver (for the cluster's Kubernetes minor where the
// release has one per minor), not the AMI type's newest; an unknown
// release keeps the AMI type's branch.
func TestPoolDriverFromRelease(t *testing.T) {
	for _, c := range []struct {
		k8s, ami, release, want string
	}{
		{"1.34", "AL2023_x86_64_NVIDIA", "1.34.1-20251112", "580.95.05"},
		{"1.33", "BOTTLEROCKET_x86_64_NVIDIA", "1.52.0-0123abcd", "570.195.03"},
		{"1.34", "BOTTLEROCKET_x86_64_NVIDIA", "1.52.0-0123abcd", "580.95.05"},
		{"1.34", "AL2023_x86_64_NVIDIA", "1.34.2-20251231", ""}, // no such release
	} {
		cs := &spec.ClusterSpec{Spec: spec.Spec{Provider: spec.ProviderEKS, KubernetesVersion: c.k8s,
			NodePools: []spec.NodePool{{Name: "p", InstanceTypes: []string{"g6.xlarge"}, OSImage: c.ami, ReleaseVersion: c.release}}}}
		d := PoolDriver(cs, 0)
		if d.Version != c.want || d.Owner != DriverOwnerAMI {
			t.Errorf("%s %s on %s: driver %q (%s, %s), want %q", c.ami, c.release, c.k8s, d.Version, d.Owner, d.Origin, c.want)
		}
		if c.want != "" && d.Path != "spec.nodePools[0].releaseVersion" {
			t.Errorf("%s: path %s", c.release, d.Path)
		}
	}
}
