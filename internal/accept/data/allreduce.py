# gpuctl accept, stage nccl-multi: all_reduce across nodes with torch.distributed's NCCL backend,
# printed in nccl-tests all_reduce_perf's table format so that the same parser judges it. Written for
# gpuctl. torchrun starts one process per GPU on every node and its static rendezvous (the
# rank-0 pod's DNS name from the headless Service) replaces MPI's launcher: no MPI, no SSH.
#
# Usage (per process, under torchrun): python3 allreduce.py MIN_BYTES MAX_BYTES ITERS
# Every process takes part; the first process of each node prints the table (the same on every node:
# the times are the slowest rank's, reduced with MAX), so every rank pod's log is a whole result.
# busbw = algbw * 2 (n-1) / n, nccl-tests' definition for all_reduce (doc/PERFORMANCE.md there).
# torch's all_reduce works in place: the one result group is the in-place measurement.
import os
import socket
import sys
import time

import torch
import torch.distributed as dist


def size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    u = s[-1].upper()
    return int(s[:-1]) * units[u] if u in units else int(s)


def main():
    lo, hi, iters, warmup = size(sys.argv[1]), size(sys.argv[2]), int(sys.argv[3]), 5
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    props = torch.cuda.get_device_properties(local)
    me = "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s" % (
        rank, os.getpid(), socket.gethostname(), local, getattr(props, "pci_bus_id", 0), props.name)
    ranks = [None] * world
    dist.all_gather_object(ranks, me)
    out = local == 0
    if out:
        v = torch.cuda.nccl.version()
        print("# gpuctl nccl-multi: torch %s, NCCL %s, world %d, rank %d of node %s (MASTER_ADDR %s)" % (
            torch.__version__, ".".join(map(str, v)) if isinstance(v, tuple) else v, world, rank,
            os.environ.get("GPUCTL_NODE", "?"), os.environ.get("MASTER_ADDR", "?")))
        print("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 2(factor) warmup iters: %d iters: %d agg iters: 1 validation: 1 graph: 0" % (lo, hi, warmup, iters))
        print("#\n# Using devices")
        for line in ranks:
            print(line)
        print("#\n#                                                               in-place")
        print("#       size         count      type   redop    root     time   algbw   busbw #wrong")
        print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)")
    n, bad = lo, 0
    while n <= hi:
        count = n // 4
        buf = torch.zeros(count, dtype=torch.float32, device="cuda")
        for _ in range(warmup):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        torch.cuda.synchronize()
        t = torch.tensor([(time.perf_counter() - t0) / iters], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        buf.fill_(rank + 1)
        dist.all_reduce(buf)
        wrong = torch.tensor([int((buf != world * (world + 1) / 2).sum().item())], device="cuda")
        dist.all_reduce(wrong)
        bad += int(wrong.item())
        sec = t.item()
        algbw = n / sec / 1e9
        busbw = algbw * 2 * (world - 1) / world
        if out:
            print("%12d  %12d     float     sum      -1  %7.1f  %6.2f  %6.2f  %5d" % (n, count, sec * 1e6, algbw, busbw, wrong.item()))
        del buf
        n *= 2
    if out:
        print("# Out of bounds values : %d %s" % (bad, "OK" if bad == 0 else "FAILED"))
        sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
