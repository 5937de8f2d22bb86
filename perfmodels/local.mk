# perfmodels: build fragment (included from Makefile.am).
