package probe

import (
	"bytes"
	"encoding/json"
	"path"
	"strconv"
	"strings"
)

// The JSON nccl-tests writes with -J/--output_file (src/util.cu,
// JSON_FILE_VERSION 2 and later): version, start_time, args, env,
// nccl_version (a version code), config {nthreads, ngpus, minimum_bytes,
// maximum_bytes, ..., devices [{rank, group, pid, hostname, device,
// device_hex, device_info}]}, results [{size, count, type, redop, root,
// out_of_place {time|cpu_time, alg_bw, bus_bw, nwrong}, in_place {...}}],
// out_of_bounds {count, okay}, average_bus_bandwidth {bandwidth, okay},
// errors [], end_time. Booleans are written as the strings "true"/"false",
// roots as padded strings ("    -1"), NaN as the string "nan", a disabled
// check as "nwrong": null; a run that dies leaves the document unfinished.

type ncclJSON struct {
	Args        []string        `json:"args"`
	NCCLVersion json.RawMessage `json:"nccl_version"`
	Config      struct {
		NThreads *int   `json:"nthreads"`
		NGPUs    *int   `json:"ngpus"`
		MinBytes *int64 `json:"minimum_bytes"`
		MaxBytes *int64 `json:"maximum_bytes"`
		Devices  []struct {
			Rank       int    `json:"rank"`
			Group      *int   `json:"group"`
			PID        *int   `json:"pid"`
			Hostname   string `json:"hostname"`
			Device     int    `json:"device"`
			DeviceHex  string `json:"device_hex"`
			DeviceInfo string `json:"device_info"`
		} `json:"devices"`
	} `json:"config"`
	Results []struct {
		Size       int64           `json:"size"`
		Count      int64           `json:"count"`
		Type       string          `json:"type"`
		Redop      string          `json:"redop"`
		Root       json.RawMessage `json:"root"`
		OutOfPlace *ncclJSONResult `json:"out_of_place"`
		InPlace    *ncclJSONResult `json:"in_place"`
	} `json:"results"`
	OutOfBounds *struct {
		Count *int `json:"count"`
	} `json:"out_of_bounds"`
	AverageBusBandwidth *struct {
		Bandwidth json.RawMessage `json:"bandwidth"`
	} `json:"average_bus_bandwidth"`
	Errors []json.RawMessage `json:"errors"`
}

type ncclJSONResult struct {
	Time         json.RawMessage `json:"time"`
	CPUTime      json.RawMessage `json:"cpu_time"`
	AlgBW        json.RawMessage `json:"alg_bw"`
	BusBandwidth json.RawMessage `json:"bus_bw"`
	NWrong       json.RawMessage `json:"nwrong"`
}

// looksLikeNCCLJSON reports whether data is an nccl-tests -J document.
func looksLikeNCCLJSON(data []byte) bool {
	i := bytes.IndexByte(data, '{')
	if i < 0 || !isBlank(bytes.TrimLeft(data[:i], "\ufeff")) && !bytes.Contains(data[:i], []byte("# Writing JSON")) {
		return false
	}
	head := data[i:]
	if len(head) > 4096 {
		head = head[:4096]
	}
	return bytes.Contains(head, []byte(`"nccl_version"`)) || (bytes.Contains(data, []byte(`"results"`)) && bytes.Contains(data, []byte(`"bus_bw"`)))
}

// jsonNumber reads a number written as a number or a string ("nan", "  -1").
func jsonNumber(raw json.RawMessage) *float64 {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err == nil {
		return &f
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil {
			return &v
		}
	}
	return nil
}

func parseNCCLJSON(r *NCCLReport, j *judge, data []byte) error {
	data = data[bytes.IndexByte(data, '{'):]
	var doc ncclJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return err
	}
	r.ValidationColumn = "#wrong"
	if len(doc.Args) > 0 {
		r.Collective = path.Base(doc.Args[0])
	}
	if v := jsonNumber(doc.NCCLVersion); v != nil {
		r.NCCLVersion = ncclVersionCode(strconv.Itoa(int(*v)))
	}
	r.NThreads, r.NGPUs = doc.Config.NThreads, doc.Config.NGPUs
	r.MinBytes, r.MaxBytes = doc.Config.MinBytes, doc.Config.MaxBytes
	ranks := map[int]bool{}
	for _, d := range doc.Config.Devices {
		if !j.room(len(r.Devices), "ranks") {
			break
		}
		r.Devices = append(r.Devices, NCCLRank{Rank: d.Rank, Group: d.Group, PID: d.PID, Host: d.Hostname, Device: d.Device, BusID: d.DeviceHex, Name: d.DeviceInfo})
		ranks[d.Rank] = true
	}
	r.Ranks = len(ranks)
	for _, res := range doc.Results {
		if !j.room(len(r.Rows), "rows") {
			break
		}
		row := NCCLRow{SizeBytes: res.Size, Count: res.Count, Type: res.Type, Redop: res.Redop}
		if v := jsonNumber(res.Root); v != nil {
			row.Root = ptr(int(*v))
		}
		row.OutOfPlace = res.OutOfPlace.toResult()
		row.InPlace = res.InPlace.toResult()
		r.Rows = append(r.Rows, row)
	}
	if doc.OutOfBounds != nil {
		r.OutOfBounds = doc.OutOfBounds.Count
	}
	if doc.AverageBusBandwidth != nil {
		r.AvgBusBandwidthGBps = jsonNumber(doc.AverageBusBandwidth.Bandwidth)
	}
	for _, e := range doc.Errors {
		var s string
		if json.Unmarshal(e, &s) == nil && strings.TrimSpace(s) != "" {
			r.Errors = append(r.Errors, truncate(s, 300))
		}
	}
	return nil
}

func (x *ncclJSONResult) toResult() *NCCLResult {
	if x == nil {
		return nil
	}
	t := jsonNumber(x.Time)
	if t == nil {
		t = jsonNumber(x.CPUTime)
	}
	out := &NCCLResult{Wrong: jsonNumber(x.NWrong)}
	if t != nil {
		out.TimeUs = *t
	}
	if v := jsonNumber(x.AlgBW); v != nil {
		out.AlgbwGBps = *v
	}
	if v := jsonNumber(x.BusBandwidth); v != nil {
		out.BusBandwidthGBps = *v
	}
	return out
}
