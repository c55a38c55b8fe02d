# Sourced by the gpu-*.sh scripts on the GPU machine: registers NVIDIA's OpenCL driver with the
# ICD loader (the driver is there, but not registered) and puts the carried libraries
# (scripts/gpu-carry.sh's .carry/gpu) first on LD_LIBRARY_PATH.
libraries=$(ldconfig -p 2>/dev/null || true)  # captured: grep -q would cut a pipe short
if [[ $libraries == *libnvidia-opencl.so.1* && ! -f /etc/OpenCL/vendors/nvidia.icd ]]; then
  mkdir -p /etc/OpenCL/vendors
  echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
carried=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.carry/gpu
export LD_LIBRARY_PATH="$carried${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
