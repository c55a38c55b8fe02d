# cuBLAS GEMM in f16 or bf16 (PyTorch torch.mm, f32 accumulation), or f32 inputs on the TF32
# tensor cores (tf32: torch.backends.cuda.matmul.allow_tf32), on square sizes given as arguments,
# for the tensor-core table of docs/benchmarks.md. Timed like bench/cublas_shapes.py:
# CUDA events around a batch of back-to-back calls (about 20 ms of work), per-call time = batch
# time / calls, the median of 5 batches. Random normal inputs.
# Usage: python3 cublas_half.py f16|bf16|tf32 2048 4096 8192
import sys
import torch

dtype = {"f16": torch.float16, "bf16": torch.bfloat16, "tf32": torch.float32}[sys.argv[1]]
torch.backends.cuda.matmul.allow_tf32 = sys.argv[1] == "tf32"
for size in sys.argv[2:]:
    n = int(size)
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    c = torch.empty(n, n, device="cuda", dtype=dtype)
    for _ in range(5):
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.mm(a, b, out=c)
    end.record()
    torch.cuda.synchronize()
    calls = max(1, min(2000, int(20.0 / max(start.elapsed_time(end), 1e-3))))
    times = []
    for _ in range(5):
        start.record()
        for _ in range(calls):
            torch.mm(a, b, out=c)
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / calls)
    times.sort()
    ms = times[len(times) // 2]
    print(f"cuBLAS {sys.argv[1]} {n}^3 {ms:.4f} ms {2 * n ** 3 / ms / 1e9:.1f} TFLOP/s "
          f"({calls} calls per batch)", flush=True)
