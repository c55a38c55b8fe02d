// Row-wise softmax of a rows x cols matrix: y[r][c] = exp(x[r][c] - m) / sum_c exp(x[r][c] - m),
// with m the row's maximum (so that exp never overflows). Three ways to compute it; see
// examples/cl_softmax.cpp, which tunes them, and docs/getting-started.md.

// One work-item per row, three passes over it: maximum, sum, output.
__kernel void softmax_rows(__global const float* x, __global float* y, const uint rows,
                           const uint cols) {
  const size_t r = get_global_id(0);
  if (r >= rows) return;
  __global const float* in = x + r * cols;
  __global float* out = y + r * cols;
  float m = -INFINITY;
  for (uint c = 0; c < cols; ++c) m = fmax(m, in[c]);
  float s = 0.0f;
  for (uint c = 0; c < cols; ++c) s += exp(in[c] - m);
  for (uint c = 0; c < cols; ++c) out[c] = exp(in[c] - m) / s;
}

// One work-item per row, two passes: the maximum and the sum together ("online" softmax: the
// sum is rescaled whenever the maximum grows), then the output.
__kernel void softmax_online(__global const float* x, __global float* y, const uint rows,
                             const uint cols) {
  const size_t r = get_global_id(0);
  if (r >= rows) return;
  __global const float* in = x + r * cols;
  __global float* out = y + r * cols;
  float m = -INFINITY, s = 0.0f;
  for (uint c = 0; c < cols; ++c) {
    const float v = in[c];
    if (v > m) {
      s = s * exp(m - v) + 1.0f;
      m = v;
    } else {
      s += exp(v - m);
    }
  }
  for (uint c = 0; c < cols; ++c) out[c] = exp(in[c] - m) / s;
}

#ifdef WG
// One work-group of WG work-items per row: each strides over the row, then the group reduces
// its maxima and sums in local memory.
float group_reduce(__local float* scratch, float value, int is_max) {
  const uint l = get_local_id(0);
  scratch[l] = value;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = WG / 2; step > 0; step /= 2) {
    if (l < step) {
      scratch[l] = is_max ? fmax(scratch[l], scratch[l + step]) : scratch[l] + scratch[l + step];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float result = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void softmax_group(
    __global const float* x, __global float* y, const uint rows, const uint cols) {
  __local float scratch[WG];
  const size_t r = get_group_id(0);
  const uint l = get_local_id(0);
  __global const float* in = x + r * cols;
  __global float* out = y + r * cols;
  float m = -INFINITY;
  for (uint c = l; c < cols; c += WG) m = fmax(m, in[c]);
  m = group_reduce(scratch, m, 1);
  float s = 0.0f;
  for (uint c = l; c < cols; c += WG) s += exp(in[c] - m);
  s = group_reduce(scratch, s, 0);
  for (uint c = l; c < cols; c += WG) out[c] = exp(in[c] - m) / s;
}
#endif
