package accept

import corev1 "k8s.io/api/core/v1"

// IsDevicePluginPod reports whether pod p is a GPU device plugin pod, as
// the kubernetes stage counts them (by name or label).
func IsDevicePluginPod(p *corev1.Pod) bool { return isDevicePlugin(p) }
