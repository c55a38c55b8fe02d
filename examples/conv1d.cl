// A 1-D convolution with zero padding: y[i] = sum over k of w[k] * x[i + k - (taps - 1) / 2].
// Both kernels run on a global size rounded up to whole work-groups: work-items past n only
// help load the tile, and write nothing.

// One work-item per output, reading its inputs from global memory.
__kernel void conv_direct(__global const float* x, __constant float* w, __global float* y,
                          const uint n, const uint taps) {
  const int i = get_global_id(0), r = (taps - 1) / 2;
  if (i >= (int)n) return;
  float sum = 0.0f;
  for (int k = 0; k < (int)taps; ++k) {
    const int j = i + k - r;
    if (j >= 0 && j < (int)n) sum += w[k] * x[j];
  }
  y[i] = sum;
}

// One work-group loads the inputs of its outputs (its size + taps - 1 values) into `tile` once;
// the host sizes `tile` (a __local argument: ::cl::Local(bytes)).
__kernel void conv_tiled(__global const float* x, __constant float* w, __global float* y,
                         const uint n, const uint taps, __local float* tile) {
  const int l = get_local_id(0), group = get_local_size(0), r = (taps - 1) / 2;
  const int first = get_group_id(0) * group - r;
  for (int t = l; t < group + (int)taps - 1; t += group) {
    const int j = first + t;
    tile[t] = j >= 0 && j < (int)n ? x[j] : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);  // every work-item reaches it: none returned before
  const int i = get_global_id(0);
  if (i >= (int)n) return;
  float sum = 0.0f;
  for (int k = 0; k < (int)taps; ++k) sum += w[k] * tile[l + k];
  y[i] = sum;
}
