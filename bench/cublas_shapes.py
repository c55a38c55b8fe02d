# cuBLAS SGEMM (PyTorch, fp32, TF32 off) on shapes MxNxK given as arguments, for the tables of
# docs/benchmarks.md (scripts/gpu-shapes.sh, scripts/gpu-squares.sh).
# Timed like tunekit's side (device time of the product, no host launch gaps): CUDA events around
# a batch of back-to-back calls, the batch sized as bench_ops's (about 20 ms of work, 3 to 1000
# calls), per-call time = batch time / calls; the median of 15 batches. Timing one call between
# two events, as a first version did, puts the host's launch latency (~10-40 us through PyTorch)
# into the small shapes' time.
import sys
import torch

torch.backends.cuda.matmul.allow_tf32 = False
for shape in sys.argv[1:]:
    m, n, k = map(int, shape.split("x"))
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.empty(m, n, device="cuda")
    for _ in range(5):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.mm(a, b, out=c)
    end.record()
    torch.cuda.synchronize()
    calls = max(3, min(1000, int(20.0 / max(start.elapsed_time(end), 1e-3))))
    times = []
    for _ in range(15):
        start.record()
        for _ in range(calls):
            torch.mm(a, b, out=c)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    times.sort()
    ms = times[len(times) // 2]
    print(f"cuBLAS {shape} {ms:.4f} ms {2 * m * n * k / ms / 1e9:.2f} TFLOP/s ({calls} calls per batch)",
          flush=True)
