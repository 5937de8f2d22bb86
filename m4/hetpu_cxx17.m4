dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl Require C++17: the pure cores use std::optional, structured bindings and if-constexpr.
AC_DEFUN([AX_CXX_COMPILE_STDCXX_17_LOCAL], [
  AC_LANG_PUSH([C++])
  save_CXXFLAGS=$CXXFLAGS
  CXXFLAGS="$CXXFLAGS -std=c++17"
  AC_MSG_CHECKING([whether $CXX supports -std=c++17])
  AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <optional>
#if __cplusplus < 201703L
#error old
#endif]], [[std::optional<int> x; (void)x;]])],
    [AC_MSG_RESULT([yes])], [AC_MSG_RESULT([no]); AC_MSG_ERROR([a C++17 compiler is required (apt-get install g++)])])
  CXXFLAGS=$save_CXXFLAGS
  AC_LANG_POP([C++])
])
