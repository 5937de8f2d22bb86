# ckpt_backend: build fragment (included from Makefile.am).
