#!/usr/bin/env bash
# The probe's steps on the GPU machine, one process each (a kernel that faults spoils its
# context). Usage (from the repository root, binaries in $1): tools/tc_probe/run.sh .carry/tc
d=${1:-.carry/tc}
P=$d/tc_probe
K=$d/matmul_tc.cl
mkdir -p /tmp/ptx
$P info; $P addr; $P mma; $P wgmma
for m in 0 1 2; do for t in 0 1; do timeout 20 $P ldm $m $t; echo "rc $?"; done; done
for m in 0 1; do for k in ca cg; do timeout 20 $P cpa $m $k; echo "rc $?"; done; done
M=${ADDR:-0}
echo "GEMM address method $M"
for c in ${CONFIGS:-0 1 2 3 4 5 6 7 8}; do TC_PTX_DIR=/tmp/ptx timeout 100 $P gemm $K $M $c both ${SIZES:-2048 4096 8192}; echo "rc $?"; done
[ -n "$OUT" ] && tar czf $OUT/ptx.tgz -C /tmp ptx
# Other modes (one configuration per process; see tc_probe.cpp's mode list), e.g.:
#   $P gemmx $K matmul_tc f16 "-DBM=128 -DBN=128 -DBK=32 -DWM=64 -DWN=64 -DSTAGES=2 -DGROUP_M=8" 2048 4096 8192
#   (wgmma: the driver's PTX with its //sm_90a: markers removed and .target sm_90a, docs/opencl.md)
#   $P gemmpatch kernels/matmul_wgmma.cl matmul_wgmma both "-DBM=128 -DBN=128 -DBK=16 -DSTAGES=4 -DGROUP_M=8" 2048 4096 8192
