# apps/common: pieces the grn and kmeans apps share (text tables with line-numbered
# errors, the JSON run record, a platform-independent generator). Pure C++.
noinst_LTLIBRARIES += apps/common/libhetpu_apps_common.la
apps_common_libhetpu_apps_common_la_SOURCES = \
	apps/common/text_table.cpp apps/common/text_table.h \
	apps/common/option_scanner.cpp apps/common/option_scanner.h \
	apps/common/app_record.cpp apps/common/app_record.h \
	apps/common/splitmix.h apps/common/divisible_workers.h apps/common/run_with_starpu.h
