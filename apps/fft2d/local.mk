# apps/fft2d: build fragment (included from Makefile.am).
