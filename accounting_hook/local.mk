# accounting_hook: build fragment (included from Makefile.am).
