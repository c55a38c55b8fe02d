# Which cuBLAS kernel PyTorch's fp32 matmul (TF32 off) runs per shape: names from the profiler.
import sys, torch
from torch.profiler import profile, ProfilerActivity
torch.backends.cuda.matmul.allow_tf32 = False
for spec in sys.argv[1:]:
    m, n, k = (int(x) for x in spec.split("x"))
    a = torch.rand(m, k, device="cuda") - 0.5
    b = torch.rand(k, n, device="cuda") - 0.5
    for _ in range(3): a @ b
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5): a @ b
        torch.cuda.synchronize()
    rows = [(e.key, e.count, e.device_time_total / max(e.count, 1)) for e in prof.key_averages()]
    for name, count, us in rows:
        print(f"{spec}: {count}x {us:8.1f} us  {name[:200]}")
