bin_PROGRAMS += tools/hetpu
tools_hetpu_SOURCES = tools/hetpu.cpp
tools_hetpu_CPPFLAGS = $(AM_CPPFLAGS) $(STARPU_CFLAGS)
tools_hetpu_LDADD = libhetpu.la $(STARPU_LIBS)
