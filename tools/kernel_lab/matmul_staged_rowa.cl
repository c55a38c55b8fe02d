// The kernel lab's variant of kernels/matmul_staged.cl that reads A as it is (row-major M x K,
// rows of LDA floats), with no transposing pass before it: the op's passes on A cost the staged
// family its lead near 1024^3 on the H200 (docs/benchmarks.md, "Rows padded instead of copied
// float by float"). The A tile keeps A's layout in local memory (MWG rows of KWG floats, padded
// by 4 floats), copied in 16-byte chunks, so K and LDA must be multiples of 4; the product reads
// it four K steps at a time as float4 along K. B, the slices of K (KS, group z), the register
// blocks and the epilogue are matmul_staged.cl's, as are the macros and the NDRange.
// Arguments: matmul_staged's (M, N, K, LDA, LDB, KS, alpha, beta, A, B, C), with A row-major.
// A lab copy on purpose (as matmul_warp.cl): if it wins on the GPU, it becomes a macro of
// kernels/matmul_staged.cl that changes the A tile's copy and reads, not a second kernel file.
#ifndef MWG
#define MWG 128
#endif
#ifndef NWG
#define NWG 128
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 2
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef CP_ASYNC
#define CP_ASYNC 1
#endif

#define WPTM (MWG / MDIMC)
#define WPTN (NWG / NDIMC)
#define NT (MDIMC * NDIMC)
#define KPAD (KWG + 4)  // an A tile row in local memory: 16-byte aligned, rows on other banks

#if (VWN != 1 && VWN != 2 && VWN != 4 && VWN != 8) || (VWM != 1 && VWM != 2 && VWM != 4 && VWM != 8)
#error "VWM and VWN 1, 2, 4 or 8"
#endif
#if KWG % 4 != 0 || NWG % 4 != 0 || MWG % (MDIMC * VWM) != 0 || NWG % (NDIMC * VWN) != 0
#error "KWG and NWG multiples of 4, MWG of MDIMC*VWM, NWG of NDIMC*VWN"
#endif
#if (MWG * KWG / 4) % NT != 0 || (KWG * NWG / 4) % NT != 0
#error "each tile whole 16-byte chunks for every work-item"
#endif
#if STAGES < 2
#error "STAGES >= 2"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef CAT(float, VWN) floatN;
#define TOARR_1(v, t) ((t)[0] = (v))
#define TOARR_2(v, t) vstore2((v), 0, (t))
#define TOARR_4(v, t) vstore4((v), 0, (t))
#define TOARR_8(v, t) vstore8((v), 0, (t))

#if CP_ASYNC
#include "tensor_core.cl"
#define COPY16(dst, src, ok) CP_ASYNC16(SHARED_ADDRESS(dst), src, ok)
#define COMMIT() CP_ASYNC_COMMIT()
#define WAIT_PENDING() CP_ASYNC_WAIT(STAGES - 2)
#else
#define COPY16(dst, src, ok) vstore4((ok) ? vload4(0, (src)) : (float4)(0.0f), 0, (dst))
#define COMMIT()
#define WAIT_PENDING()
#endif

// A: MWG rows from bm, KWG floats from k0 each (KWG / 4 chunks a row); zero past M and K.
#define COPY_A(dst, k0)                                                                   \
  _Pragma("unroll") for (int i_ = 0; i_ < MWG * KWG / 4 / NT; ++i_) {                     \
    const int c_ = tid + i_ * NT, r_ = c_ / (KWG / 4), x_ = (c_ % (KWG / 4)) * 4;         \
    const bool ok_ = bm + r_ < M && (k0) + x_ < K;                                        \
    COPY16(&dst[r_][x_], ok_ ? A + (size_t)(bm + r_) * LDA + (k0) + x_ : A, ok_);         \
  }
// B: KWG rows from k0, NWG floats from bn each; zero past K and the row.
#define COPY_B(dst, k0)                                                                   \
  _Pragma("unroll") for (int i_ = 0; i_ < KWG * NWG / 4 / NT; ++i_) {                     \
    const int c_ = tid + i_ * NT, r_ = c_ / (NWG / 4), x_ = (c_ % (NWG / 4)) * 4;         \
    const bool ok_ = (k0) + r_ < K && bn + x_ < LDB;                                      \
    COPY16(&dst[r_][x_], ok_ ? B + (size_t)((k0) + r_) * LDB + bn + x_ : B, ok_);         \
  }
#define LOAD_TILE(kt, s)          \
  do {                            \
    COPY_A(As[s], (kt) * KWG)     \
    COPY_B(Bs[s], (kt) * KWG)     \
  } while (0)

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void matmul_staged_rowa(const int M, const int N, const int K_all, const int LDA, const int LDB,
                        const int KS, const float alpha, const float beta,
                        __global const float* restrict A_all, __global const float* restrict B_all,
                        __global float* C_all) {
  __local float As[STAGES][MWG][KPAD] __attribute__((aligned(16)));
  __local float Bs[STAGES][KWG][NWG] __attribute__((aligned(16)));
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * NDIMC + tx;
  const int bm = get_group_id(1) * MWG, bn = get_group_id(0) * NWG;
  const int k_begin = get_group_id(2) * KS;
  const int K = min(KS, K_all - k_begin);
  __global const float* restrict A = A_all + k_begin;
  __global const float* restrict B = B_all + (size_t)k_begin * LDB;
  __global float* C = C_all + get_group_id(2) * (size_t)M * N;
  const int tiles = (K + KWG - 1) / KWG;

  float acc[WPTM][WPTN];
#pragma unroll
  for (int i = 0; i < WPTM; ++i)
#pragma unroll
    for (int j = 0; j < WPTN; ++j) acc[i][j] = 0.0f;

#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) LOAD_TILE(s, s);
    COMMIT();
  }
  for (int kt = 0; kt < tiles; ++kt) {
    WAIT_PENDING();
    barrier(CLK_LOCAL_MEM_FENCE);
    const int next = kt + STAGES - 1;
    if (next < tiles) LOAD_TILE(next, next % STAGES);
    COMMIT();
    const int cur = kt % STAGES;
#pragma unroll
    for (int k4 = 0; k4 < KWG; k4 += 4) {
      float4 a4[WPTM];  // this work-item's rows, four K steps each
#pragma unroll
      for (int i = 0; i < WPTM; ++i)
        a4[i] = *(__local const float4*)&As[cur][((i / VWM) * MDIMC + ty) * VWM + i % VWM][k4];
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        float b[WPTN];
#pragma unroll
        for (int j = 0; j < WPTN / VWN; ++j)
          CAT(TOARR_, VWN)(*(__local const floatN*)&Bs[cur][k4 + s][(j * NDIMC + tx) * VWN], b + j * VWN);
#pragma unroll
        for (int i = 0; i < WPTM; ++i) {
          const float a = s == 0 ? a4[i].x : s == 1 ? a4[i].y : s == 2 ? a4[i].z : a4[i].w;
#pragma unroll
          for (int j = 0; j < WPTN; ++j) acc[i][j] = mad(a, b[j], acc[i][j]);
        }
      }
    }
  }

#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int row = bm + ((i / VWM) * MDIMC + ty) * VWM + i % VWM;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int col = bn + ((j / VWN) * NDIMC + tx) * VWN + j % VWN;
      if (col < N) {
        const size_t idx = (size_t)row * N + col;
        const float c = alpha * acc[i][j];
        C[idx] = beta != 0.0f ? mad(beta, C[idx], c) : c;
      }
    }
  }
}
