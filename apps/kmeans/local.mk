# apps/kmeans: build fragment (included from Makefile.am).
