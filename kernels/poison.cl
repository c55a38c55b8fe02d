// poison_bytes: sets the first `bytes` bytes of `out` to 0xFF (a NaN in every float type), 16 per
// work-item. A validation's clear of a candidate's output on a GPU (src/ops/host_references.hpp,
// clear_output): a launch, where the driver's fill command would wait on the tuner's builds.
__kernel void poison_bytes(__global uchar* out, ulong bytes) {
  const ulong first = (ulong)get_global_id(0) * 16;
  if (first + 16 <= bytes) {
    vstore16((uchar16)(0xFF), 0, out + first);
    return;
  }
  for (ulong i = first; i < bytes; ++i) out[i] = 0xFF;
}
