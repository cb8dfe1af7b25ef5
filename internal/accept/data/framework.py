# gpuctl accept, stage framework (layer 5, "the real framework"): the node's PyTorch does real work.
# Written for gpuctl. Under torchrun, one process per GPU (or per CPU rank with --device cpu):
#   python3 -m torch.distributed.run --standalone --nproc-per-node N framework.py [options]
# It also runs across nodes (WORLD_SIZE > LOCAL_WORLD_SIZE): every check then spans all ranks.
#
# Checks, in order; a failing check does not stop the others:
#   matmul      tensors and an fp32 matmul on each rank's device against a float64 CPU reference
#   all-reduce  torch.distributed all_reduce (nccl on GPUs, gloo on CPU) of integer-valued floats: exact sum
#   training    a small MLP learns a random teacher (fixed seed), DistributedDataParallel when world > 1
#   checkpoint  torch.save of model + optimizer state, torch.load into fresh ones, bit-equal tensors,
#               then one more step from both gives the same loss
#   inference   an nn.TransformerEncoder of random weights, eval + no_grad, twice: finite, identical
#
# Output: the first process of each node prints one line per check and a summary line, each
#   GPUCTL-FRAMEWORK {json}
# with "formatVersion": "gpuctl-framework/v1" and "record": "check" or "summary" (the results of every
# rank are gathered first, so each node's log is the whole result). Durations are milliseconds.
# Only torch APIs present in PyTorch 1.13 (Debian bookworm's python3-torch) and in NGC PyTorch
# 23.10 / 25.01 are used. GPUCTL_FRAMEWORK_CORRUPT_CHECKPOINT=1 perturbs one tensor after loading,
# to show the checkpoint check failing.
import argparse
import json
import math
import os
import socket
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.nn as nn

FORMAT = "gpuctl-framework/v1"
PREFIX = "GPUCTL-FRAMEWORK "

# Thresholds. matmul: max |fp32 - fp64| over max |fp64| (a wrong GPU result is O(1); fp32 is ~1e-6
# at these sizes, TF32 ~1e-3, so TF32 is turned off). training: final/initial loss at most this.
MAX_REL_ERR = 1e-4
MAX_LOSS_RATIO = 0.1


def ms_since(t0, dev):
    sync(dev)
    return round((time.perf_counter() - t0) * 1000.0, 3)


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def one_line(s, n=200):
    s = " ".join(str(s).split())
    return s if len(s) <= n else s[:n] + "..."


def check_matmul(ctx):
    n, dev = ctx.args.matmul_n, ctx.dev
    g = torch.Generator().manual_seed(1234 + ctx.rank)
    a = torch.randn(n, n, generator=g, dtype=torch.float64)
    b = torch.randn(n, n, generator=g, dtype=torch.float64)
    ref = a @ b
    # Tensors: a copy to the device and an elementwise kernel with an exact answer.
    x = torch.arange(n * 16, dtype=torch.float32).to(dev)
    y = (x * 2 + 1).sum().item()
    want = float(2 * (n * 16 - 1) * (n * 16) // 2 + n * 16)
    af, bf = a.float().to(dev), b.float().to(dev)
    got = af @ bf
    sync(dev)
    t0 = time.perf_counter()
    iters = 5
    for _ in range(iters):
        got = af @ bf
    ms = ms_since(t0, dev) / iters
    err = (got.double().cpu() - ref).abs().max().item() / ref.abs().max().item()
    vals = {"n": n, "maxRelErr": err, "elementwiseSum": y, "elementwiseWant": want,
            "matmulMs": round(ms, 3), "gflops": round(2.0 * n ** 3 / (ms / 1000.0) / 1e9, 1) if ms > 0 else 0.0}
    ok = math.isfinite(err) and err <= MAX_REL_ERR and y == want
    return ok, vals, {"maxRelErr": MAX_REL_ERR}


def check_allreduce(ctx):
    dev, world, count = ctx.dev, ctx.world, ctx.args.allreduce_elems
    # Integer-valued floats: every partial sum is exact in fp32.
    base = (torch.arange(count, dtype=torch.float32) % 7).to(dev)
    buf = base + ctx.rank
    sync(dev)
    t0 = time.perf_counter()
    dist.all_reduce(buf)
    ms = ms_since(t0, dev)
    want = base * world + world * (world - 1) / 2
    wrong = int((buf != want).sum().item())
    return wrong == 0, {"elements": count, "bytes": count * 4, "world": world, "wrong": wrong, "allReduceMs": ms}, {"wrong": 0}


class MLP(nn.Module):
    def __init__(self, d_in, hidden, d_out):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, d_out))

    def forward(self, x):
        return self.net(x)


D_IN, HIDDEN, D_OUT, BATCH = 32, 64, 4, 64


def new_model(dev):
    torch.manual_seed(7)
    m = MLP(D_IN, HIDDEN, D_OUT).to(dev)
    return m, torch.optim.Adam(m.parameters(), lr=3e-3)


def teacher_batch(ctx, g):
    # The teacher is the same on every rank; each rank draws its own inputs.
    tg = torch.Generator().manual_seed(99)
    w = torch.randn(D_IN, D_OUT, generator=tg) / math.sqrt(D_IN)
    x = torch.randn(BATCH, D_IN, generator=g)
    return x.to(ctx.dev), torch.tanh(x @ w).to(ctx.dev)


def mean_across(ctx, v):
    t = torch.tensor([v], dtype=torch.float64 if ctx.dev.type == "cpu" else torch.float32, device=ctx.dev)
    dist.all_reduce(t)
    return t.item() / ctx.world


def params_drift(ctx, model):
    """The largest |parameter - rank 0's| over every parameter and rank (0.0 on one rank)."""
    if ctx.world == 1:
        return 0.0
    worst = torch.zeros(1, dtype=torch.float32, device=ctx.dev)
    with torch.no_grad():
        for p in model.parameters():
            p0 = p.detach().clone()
            dist.broadcast(p0, 0)
            worst = torch.maximum(worst, (p.detach() - p0).abs().max().reshape(1).float())
    dist.all_reduce(worst, op=dist.ReduceOp.MAX)
    return float(worst.item())


def check_training(ctx):
    steps = ctx.args.steps
    model, opt = new_model(ctx.dev)
    net = nn.parallel.DistributedDataParallel(model, device_ids=[ctx.dev.index] if ctx.dev.type == "cuda" else None) if ctx.world > 1 else model
    g = torch.Generator().manual_seed(1000 + ctx.rank)
    loss_fn = nn.MSELoss()
    first = last = None
    sync(ctx.dev)
    t0 = time.perf_counter()
    for _ in range(steps):
        x, y = teacher_batch(ctx, g)
        opt.zero_grad()
        loss = loss_fn(net(x), y)
        loss.backward()
        opt.step()
        if first is None:
            first = loss.item()
    last = loss.item()
    ms = ms_since(t0, ctx.dev)
    first, last = mean_across(ctx, first), mean_across(ctx, last)
    ratio = last / first if first > 0 else float("inf")
    drift = params_drift(ctx, model)
    ctx.trained = (model, opt, g)
    vals = {"steps": steps, "initialLoss": first, "finalLoss": last, "lossRatio": ratio, "ddp": ctx.world > 1,
            "paramsMaxDiff": drift,
            "stepsPerSecond": round(steps / (ms / 1000.0), 2) if ms > 0 else 0.0, "msPerStep": round(ms / steps, 3)}
    # DDP keeps every rank's parameters identical: any difference from rank 0's means the gradient
    # all-reduce did not synchronise them (a loss can fall on each rank alone).
    ok = math.isfinite(first) and math.isfinite(last) and ratio <= MAX_LOSS_RATIO and drift == 0.0
    return ok, vals, {"maxLossRatio": MAX_LOSS_RATIO}


def state_tensors(prefix, obj, out):
    if torch.is_tensor(obj):
        out.append((prefix, obj))
    elif isinstance(obj, dict):
        for k in sorted(obj, key=str):
            state_tensors("%s.%s" % (prefix, k), obj[k], out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            state_tensors("%s.%d" % (prefix, i), v, out)
    return out


def step_loss(model, opt, x, y):
    opt.zero_grad()
    loss = nn.MSELoss()(model(x), y)
    loss.backward()
    opt.step()
    return loss.item()


def check_checkpoint(ctx):
    if ctx.trained is None:
        raise RuntimeError("no trained model (the training check did not finish)")
    model, opt, g = ctx.trained
    fd, path = tempfile.mkstemp(prefix="gpuctl-framework-ckpt-", suffix=".pt", dir=ctx.args.dir)
    os.close(fd)
    try:
        t0 = time.perf_counter()
        torch.save({"model": model.state_dict(), "optim": opt.state_dict()}, path)
        save_ms = ms_since(t0, ctx.dev)
        size = os.path.getsize(path)
        t0 = time.perf_counter()
        ck = torch.load(path, map_location=ctx.dev)
        m2, o2 = new_model(ctx.dev)
        m2.load_state_dict(ck["model"])
        o2.load_state_dict(ck["optim"])
        load_ms = ms_since(t0, ctx.dev)
    finally:
        os.remove(path)
    if os.environ.get("GPUCTL_FRAMEWORK_CORRUPT_CHECKPOINT") == "1":
        with torch.no_grad():
            next(m2.parameters()).view(-1)[0] += 1.0
    a = state_tensors("model", model.state_dict(), []) + state_tensors("optim", opt.state_dict()["state"], [])
    b = state_tensors("model", m2.state_dict(), []) + state_tensors("optim", o2.state_dict()["state"], [])
    mismatched = [na for (na, ta), (nb, tb) in zip(a, b) if na != nb or not torch.equal(ta, tb)]
    x, y = teacher_batch(ctx, g)
    loss_a, loss_b = step_loss(model, opt, x, y), step_loss(m2, o2, x, y)
    vals = {"bytes": size, "tensors": len(a), "mismatched": len(mismatched) + abs(len(a) - len(b)),
            "firstMismatch": mismatched[0] if mismatched else "", "lossOriginal": loss_a, "lossRestored": loss_b,
            "saveMs": save_ms, "loadMs": load_ms}
    ok = not mismatched and len(a) == len(b) and loss_a == loss_b and math.isfinite(loss_a)
    return ok, vals, {"mismatched": 0, "lossEqual": True}


def check_inference(ctx):
    torch.manual_seed(11)
    layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.1, batch_first=True)
    model = nn.TransformerEncoder(layer, num_layers=2).to(ctx.dev).eval()
    x = torch.randn(4, 16, 64, generator=torch.Generator().manual_seed(12)).to(ctx.dev)
    times = []
    with torch.no_grad():
        outs = []
        for _ in range(2):
            t0 = time.perf_counter()
            outs.append(model(x))
            times.append(ms_since(t0, ctx.dev))
    finite = bool(torch.isfinite(outs[0]).all().item() and torch.isfinite(outs[1]).all().item())
    same = torch.equal(outs[0], outs[1])
    vals = {"layers": 2, "dModel": 64, "batch": 4, "seq": 16, "finite": finite, "identical": same,
            "latencyMs": times[-1], "firstMs": times[0]}
    return finite and same, vals, {"finite": True, "identical": True}


CHECKS = [("matmul", check_matmul), ("all-reduce", check_allreduce), ("training", check_training),
          ("checkpoint", check_checkpoint), ("inference", check_inference)]


class Ctx:
    pass


def run_check(ctx, name, fn):
    t0 = time.perf_counter()
    res = {"rank": ctx.rank, "node": ctx.host, "device": str(ctx.dev)}
    try:
        ok, vals, thr = fn(ctx)
        res.update(ok=bool(ok), values=vals, thresholds=thr)
    except Exception as e:  # one failing check must not hide the others
        res.update(ok=False, values={}, thresholds={}, error={"class": type(e).__name__, "message": one_line(e)})
    res["durationMs"] = round((time.perf_counter() - t0) * 1000.0, 3)
    return res


def gather(ctx, obj):
    out = [None] * ctx.world
    dist.all_gather_object(out, obj)
    return out


def finite(v):
    # JSON has no NaN or infinity: a non-finite number is printed as the string "nan", "inf" or "-inf".
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if v != v else ("inf" if v > 0 else "-inf")
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


def emit(rec):
    sys.stdout.write(PREFIX + json.dumps(finite(rec), sort_keys=True, allow_nan=False) + "\n")
    sys.stdout.flush()


def check_record(name, ranks):
    bad = [r for r in ranks if not r["ok"]]
    worst = bad[0] if bad else ranks[0]
    rec = {"formatVersion": FORMAT, "record": "check", "check": name, "ok": not bad, "device": worst["device"],
           "node": worst["node"], "rank": worst["rank"], "values": worst["values"], "thresholds": worst["thresholds"],
           "durationMs": max(r["durationMs"] for r in ranks), "ranks": ranks}
    if "error" in worst:
        rec["error"] = worst["error"]
    return rec


def setup(args):
    ctx = Ctx()
    # The node: GPUCTL_NODE where the pod sets it (the rank pods of framework-multi, from spec.nodeName), else the host name.
    ctx.args, ctx.trained, ctx.host = args, None, os.environ.get("GPUCTL_NODE") or socket.gethostname()
    for k, v in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("LOCAL_WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"), ("MASTER_PORT", "29511")):
        os.environ.setdefault(k, v)
    ctx.rank, ctx.world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    ctx.local, ctx.local_world = int(os.environ["LOCAL_RANK"]), int(os.environ["LOCAL_WORLD_SIZE"])
    ctx.printer = ctx.local == 0
    want = args.device
    if want == "auto":
        want = "cuda" if torch.cuda.is_available() else "cpu"
    if want == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("CUDA is not available to torch (torch.cuda.is_available() is False)")
        torch.cuda.set_device(ctx.local)
        ctx.dev = torch.device("cuda", ctx.local)
        # NGC images force TF32 for cuBLAS unless this is off; the matmul check wants fp32.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    else:
        ctx.dev = torch.device("cpu")
    ctx.backend = "nccl" if ctx.dev.type == "cuda" else "gloo"
    dist.init_process_group(ctx.backend, init_method="env://")
    return ctx


def summary(ctx, results, t0):
    failed = [r["check"] for r in results if not r["ok"]]
    rec = {"formatVersion": FORMAT, "record": "summary", "ok": not failed,
           "checks": [r["check"] for r in results], "failed": failed, "torch": torch.__version__,
           "cuda": torch.version.cuda or "", "durationMs": round((time.perf_counter() - t0) * 1000.0, 3)}
    if ctx is not None:
        nodes = sorted({r["node"] for res in results for r in res["ranks"]}) or [ctx.host]
        rec.update(world=ctx.world, localWorld=ctx.local_world, nodes=len(nodes), backend=ctx.backend,
                   device=ctx.dev.type, gpus=[torch.cuda.get_device_name(ctx.dev)] if ctx.dev.type == "cuda" else [])
    return rec


def main():
    p = argparse.ArgumentParser(description="gpuctl accept framework checks")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--matmul-n", type=int, default=2048)
    p.add_argument("--allreduce-elems", type=int, default=1 << 24)
    p.add_argument("--dir", default=None, help="directory for the checkpoint file (default: the temp dir)")
    args = p.parse_args()
    if min(args.steps, args.matmul_n, args.allreduce_elems) < 1:
        p.error("--steps, --matmul-n and --allreduce-elems must be at least 1")
    t0 = time.perf_counter()
    try:
        ctx = setup(args)
    except Exception as e:
        if os.environ.get("LOCAL_RANK", "0") == "0":
            init = {"formatVersion": FORMAT, "record": "check", "check": "init", "ok": False, "values": {}, "thresholds": {},
                    "durationMs": 0.0, "ranks": [], "error": {"class": type(e).__name__, "message": one_line(e)}}
            emit(init)
            emit(summary(None, [init], t0))
        return 1
    results = []
    for name, fn in CHECKS:
        rec = check_record(name, gather(ctx, run_check(ctx, name, fn)))
        results.append(rec)
        if ctx.printer:
            emit(rec)
    if ctx.printer:
        emit(summary(ctx, results, t0))
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
