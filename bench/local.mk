# Benchmarks (run by `./run bench`); not installed.

# hetpu + StarPU (1 CPU worker) vs direct single-threaded cblas_dgemm on the same matrices.
noinst_PROGRAMS += bench/matmul_overhead
bench_matmul_overhead_SOURCES = bench/matmul_overhead.cpp
bench_matmul_overhead_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS) $(BLAS_CFLAGS)
bench_matmul_overhead_LDADD = $(hetpu_matmul_libs)
