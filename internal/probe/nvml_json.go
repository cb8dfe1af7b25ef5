package probe

import (
	"bytes"
	"encoding/json"
	"errors"
)

// looksLikeNVMLJSON reports whether data is the JSON report of
// `gpuctl probe nvml -o json`: an object whose "kind" is "nvml".
func looksLikeNVMLJSON(data, head []byte) bool {
	t := bytes.TrimSpace(head)
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"kind"`)) || !bytes.Contains(t, []byte(`"nvml"`)) {
		return false
	}
	t = bytes.TrimSpace(data)
	var h struct {
		Kind Kind `json:"kind"`
	}
	return json.Unmarshal(t, &h) == nil && h.Kind == KindNVML
}

// ParseNVML reads the JSON report `gpuctl probe nvml -o json` prints (on the
// node, typically in a Job) back into an NVMLReport. The verdict and
// findings are judged again from the GPU facts by this gpuctl's rules rather
// than taken from the input. Input that is not such a report gives a report
// with verdict unknown and a finding saying why.
func ParseNVML(data []byte) *NVMLReport {
	r := &NVMLReport{}
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimSpace(data)))
	err := dec.Decode(r)
	if err == nil && r.Kind != KindNVML {
		err = errNotNVML
	}
	if err != nil {
		r = &NVMLReport{}
		j := newJudge(&r.Header, KindNVML)
		why := err.Error()
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] != '{' {
			// Not JSON at all: gpuctl's own error ("NVML unavailable ...")
			// or the runtime's says more than the decoder.
			why = string(firstLine(t, 200))
		}
		j.unusable("nvml-json-unparsable", "", "not a gpuctl probe nvml JSON report: %s", why)
		j.done()
		fillNil(r)
		return r
	}
	JudgeNVML(r)
	return r
}

var errNotNVML = errors.New(`"kind" is not "nvml"`)

// firstLine returns data up to its first newline, at most n bytes.
func firstLine(data []byte, n int) []byte {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	if len(data) > n {
		data = data[:n]
	}
	return bytes.TrimSpace(data)
}
