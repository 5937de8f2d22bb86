# shellcheck shell=bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# The real CPU + OpenCL (PoCL) node and its apps as the plbhac_* benches run them: sourced
# by plbhac_node_limit.sh, plbhac_static_split.sh and plbhac_lib_ab.sh, after setting
# $build. Environment: GRN_GENES (250), KM_N (500000), KM_ITERS (20), POCL_MAX_PTHREAD_COUNT (1).
grn_genes=${GRN_GENES:-250}
km_n=${KM_N:-500000}
km_iters=${KM_ITERS:-20}
export STARPU_OPENCL_ON_CPUS=1 STARPU_NCUDA=0 STARPU_SILENT=1
export POCL_MAX_PTHREAD_COUNT=${POCL_MAX_PTHREAD_COUNT:-1}

# real_node_cmd APP [LIBS]: sets the array app_cmd to APP's command line (mm3072, mm4096,
# grn or kmeans; every run verifiable). LIBS=.libs/ names libtool's real binaries, which
# take LD_LIBRARY_PATH (plbhac_lib_ab.sh swaps libhetpu that way).
real_node_cmd() {
  local libs=${2:-}
  case "$1" in
    mm3072) app_cmd=("$build/apps/matmul/${libs}hetpu-matmul" -n 3072 --verify) ;;
    mm4096) app_cmd=("$build/apps/matmul/${libs}hetpu-matmul" -n 4096 --verify) ;;
    grn) app_cmd=("$build/apps/grn/${libs}hetpu-grn" --generate "$grn_genes" --samples 100 --max-score 0.6) ;;
    kmeans) app_cmd=("$build/apps/kmeans/${libs}hetpu-kmeans" --generate "$km_n" --dims 8 -k 16 --blobs 6 --sigma 10
                     --tol 0 --max-iter "$km_iters") ;;
    *) echo "APP must be mm3072, mm4096, grn or kmeans, not '$1'" >&2; return 1 ;;
  esac
  [ -x "${app_cmd[0]}" ] || { echo "build first: make -C $build (no ${app_cmd[0]})" >&2; return 1; }
}
