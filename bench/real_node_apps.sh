# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The real node and its apps as the plbhac_* benches run them: sourced by
# plbhac_node_limit.sh, plbhac_static_split.sh and plbhac_lib_ab.sh, after setting $build.
# Environment: GRN_GENES (250), KM_N (500000), KM_ITERS (20), POCL_MAX_PTHREAD_COUNT (1),
# NODE_GPU: opencl (default; the CPU + OpenCL node: one CPU worker beside one PoCL device,
# which computes on the same cores) or cuda (a CPU + CUDA node: one CUDA worker and
# NODE_NCPU CPU workers, default the cores left beside the CUDA worker's own).
grn_genes=${GRN_GENES:-250}
km_n=${KM_N:-500000}
km_iters=${KM_ITERS:-20}
node_gpu=${NODE_GPU:-opencl}
export STARPU_SILENT=1
case "$node_gpu" in
  opencl)
    export STARPU_OPENCL_ON_CPUS=1 STARPU_NCUDA=0 POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}
    node_ncpu=${NODE_NCPU:-1} node_gpu_var=STARPU_NOPENCL node_gpu_name=OpenCL ;;
  cuda)
    export STARPU_NOPENCL=0
    node_ncpu=${NODE_NCPU:-$(($(nproc) - 1))} node_gpu_var=STARPU_NCUDA node_gpu_name=CUDA ;;
  *) echo "NODE_GPU must be opencl or cuda, not '$node_gpu'" >&2; exit 2 ;;
esac

# node_workers WHOLE|CPU|GPU: the node's workers for a run on the whole node, on its CPU
# workers alone or on its GPU worker alone (the same CPU workers in WHOLE and CPU, so that
# the limit adds what each part of the whole node gives on its own).
node_workers() {
  case "$1" in
    whole) export STARPU_NCPU=$node_ncpu "$node_gpu_var=1" ;;
    cpu) export STARPU_NCPU=$node_ncpu "$node_gpu_var=0" ;;
    gpu) export STARPU_NCPU=0 "$node_gpu_var=1" ;;
  esac
}

# real_node_cmd APP [LIBS]: sets the array app_cmd to APP's command line (mmN: matmul of
# order N, such as mm3072; fftN: fft2d of an N x N matrix, such as fft4096; grn or kmeans;
# every run verifiable). LIBS=.libs/ names libtool's real binaries, which
# take LD_LIBRARY_PATH (plbhac_lib_ab.sh swaps libhetpu that way).
real_node_cmd() {
  local libs=${2:-}
  case "$1" in
    mm[1-9]*) app_cmd=("$build/apps/matmul/${libs}hetpu-matmul" -n "${1#mm}" --verify) ;;
    fft[1-9]*) app_cmd=("$build/apps/fft2d/${libs}hetpu-fft2d" -n "${1#fft}" --verify) ;;
    grn) app_cmd=("$build/apps/grn/${libs}hetpu-grn" --generate "$grn_genes" --samples 100 --max-score 0.6) ;;
    kmeans) app_cmd=("$build/apps/kmeans/${libs}hetpu-kmeans" --generate "$km_n" --dims 8 -k 16 --blobs 6 --sigma 10
                     --tol 0 --max-iter "$km_iters") ;;
    *) echo "APP must be mmN (such as mm3072), fftN (such as fft4096), grn or kmeans, not '$1'" >&2; return 1 ;;
  esac
  [ -x "${app_cmd[0]}" ] || { echo "build first: make -C $build (no ${app_cmd[0]})" >&2; return 1; }
}
