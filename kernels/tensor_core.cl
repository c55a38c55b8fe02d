// What the tensor-core GEMMs (matmul_tc.cl, matmul_wgmma.cl) share, #included by both and
// never built alone: the PTX type of the 16-bit inputs (BF16 1: bf16, else f16), a 16-byte
// cp.async into local memory with zero fill, and the epilogue's conversions between two f32 and
// one 32-bit word of two 16-bit values. NVIDIA only (inline PTX).
#ifndef TUNEKIT_TENSOR_CORE_CL
#define TUNEKIT_TENSOR_CORE_CL

#ifndef BF16
#define BF16 0
#endif
#if BF16
#define MMA_TYPE "bf16"
#else
#define MMA_TYPE "f16"
#endif

// Copies 16 bytes from global `src` to the local-memory (shared-window) address `shared`,
// asynchronously (cp.async.commit_group / wait_group order it); 16 zero bytes when `ok` is false
// (`src` is then never read, but must still be a valid address).
#define CP_ASYNC16(shared, src, ok)                                                  \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared),         \
               "l"((ulong)(src)), "r"((ok) ? 16 : 0)                                  \
               : "memory")

// Two f32 -> one 32-bit word of two 16-bit values (lo: the lower column), rounded to nearest.
inline uint pack2(float lo, float hi) {
  uint r;
  asm("cvt.rn." MMA_TYPE "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// The inverse: one 32-bit word of two 16-bit values -> (lo, hi) as f32, exactly.
inline float2 unpack2(uint v) {
#if BF16
  return (float2)(as_float(v << 16), as_float(v & 0xffff0000u));
#else
  float lo, hi;
  asm("{.reg .f16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;}"
      : "=f"(lo), "=f"(hi)
      : "r"(v));
  return (float2)(lo, hi);
#endif
}

#endif  // TUNEKIT_TENSOR_CORE_CL
