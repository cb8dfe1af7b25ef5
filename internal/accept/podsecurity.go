package accept

// PodSecurityLevel is the least Pod Security Standard level ("restricted",
// "baseline" or "privileged") whose enforcement admits the probe pods of
// stages (with privileged: --allow-privileged): the
// pod-security.kubernetes.io/enforce label a namespace of gpuctl's own
// (the generated sweep's) carries. Stages that create no pod need
// "restricted".
func PodSecurityLevel(privileged bool, stages []Stage) string {
	switch podSecurityNeeded(privileged, stages) {
	case psPrivileged:
		return "privileged"
	case psBaseline:
		return "baseline"
	}
	return "restricted"
}
