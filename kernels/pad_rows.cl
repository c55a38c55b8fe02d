// Copies a row-major f32 matrix into rows of a longer length, the extra columns zero: matmul's
// staged family copies rows of B in 16-byte chunks, so where N is not a multiple of 4 the host
// gives it B with rows padded to one (src/ops/transposed_operand.hpp).
/*
  Kernel: pad_rows(rows, cols, ld, in, out): in holds rows x cols, out rows x ld (ld >= cols, a
    multiple of 4); each work-item writes one float4 of out, reading its (at most four) floats of
    in one by one (in's rows are not 16-byte aligned).
  NDRange: any local (lx, ly); global >= (ld / 4, rows).
*/
__kernel void pad_rows(const int rows, const int cols, const int ld, __global const float* restrict in,
                       __global float* restrict out) {
  const int c = get_global_id(0) * 4, r = get_global_id(1);
  if (r >= rows || c >= ld) return;
  __global const float* row = in + (size_t)r * cols;
  const float4 v = (float4)(c < cols ? row[c] : 0.0f, c + 1 < cols ? row[c + 1] : 0.0f,
                            c + 2 < cols ? row[c + 2] : 0.0f, c + 3 < cols ? row[c + 3] : 0.0f);
  vstore4(v, 0, out + (size_t)r * ld + c);
}
