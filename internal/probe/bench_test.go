package probe

import "testing"

// Benchmarks per parser on the largest real output of each kind. They time;
// they assert nothing.
func BenchmarkParse(b *testing.B) {
	for _, c := range []struct {
		name string
		kind Kind
		file string
	}{
		{"nvidia-smi/xml", KindNvidiaSMI, "nvidia-smi/rtx4000-sff-ada-x1-v13.xml"},
		{"nvidia-smi/query", KindNvidiaSMI, "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01.txt"},
		{"nvidia-smi/table", KindNvidiaSMI, "nvidia-smi/h100-80gb-hbm3-x8-summary-table-550.90.07.txt"},
		{"nvidia-smi/csv", KindNvidiaSMI, "nvidia-smi/v100-sxm3-32gb-x16-query-gpu-csv-nounits.txt"},
		{"nvidia-smi/nvlink", KindNvidiaSMI, "nvlink-ecc-mig/a100-sxm4-80gb-x8-nvlink-status.txt"},
		{"topo", KindTopo, "topo/a100-nv12-x8-18nic-numa8-spaces.txt"},
		{"nccl/text", KindNCCL, "nccl-tests/v100-sxm3-dgx2-x12-allgather-error-col-4-FAILED.txt"},
		{"nccl/json", KindNCCL, "testdata/nccl/allreduce-json-v2-gh200.json"},
		{"cuda", KindCUDA, "cuda-samples/deviceQuery-h100-80gb-hbm3-x8.txt"},
		{"dcgm/text", KindDCGM, "dcgm/h100-x8-diag-r3-cuinit-fail-dcgm3.3.8-driver560.txt"},
		{"dcgm/json", KindDCGM, "dcgm/nvvs-json-dcgm3.1.0-x8-pass-warning-prefix-nulls.txt"},
		{"dmesg", KindDmesg, "failures/dmesg-T-xid119-gsp-rpc-timeout-h100.log"},
		{"detect", KindAuto, "nvidia-smi/h100-80gb-hbm3-x8-q-535.183.01.txt"},
	} {
		data := readFile(b, source(c.file))
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(c.kind, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
