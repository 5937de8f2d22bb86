# apps/grn: build fragment (included from Makefile.am).
