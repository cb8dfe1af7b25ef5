//go:build !nvml

package probe

// NewSystemProber returns the prober for this machine's NVML. This build has
// no NVML support (it needs cgo and the "nvml" build tag), so it always
// returns ErrNVMLNotCompiled.
func NewSystemProber() (Prober, error) {
	return nil, ErrNVMLNotCompiled
}
