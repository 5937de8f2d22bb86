# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced by the shell tests: the heterogeneous test node (1 CPU worker + 1 OpenCL worker
# on PoCL), a private StarPU home, and the build directory.
: "${HETPU_BUILDDIR:?HETPU_BUILDDIR must point at the build directory}"
export STARPU_NOPENCL=1 STARPU_OPENCL_ON_CPUS=1 STARPU_NCPU=1 STARPU_NCUDA=0 STARPU_SILENT=1
STARPU_HOME=$(mktemp -d "${TMPDIR:-/tmp}/hetpu-test.XXXXXX")
export STARPU_HOME
# Runs are charged by the accounting hook (on by default): never into the user's ledger.
export HETPU_LEDGER="${HETPU_LEDGER:-$STARPU_HOME/ledger.sqlite}"
trap 'rm -rf "$STARPU_HOME"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# plb-hac saves its models under $HETPU_HOME (plbhac_model_store.h): keep tests off the
# user's, and every test run cold.
export HETPU_HOME="$STARPU_HOME/hetpu-home"
