# Issue 34: SourceLink (src/pipe/source_link.h), the owner of "the pipe knows which server it reads",
# against the MariaDB servers it only reads (full, minimal, statement, compress) and a loopback proxy.
chsync_test(source_link_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/source_link_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tcp_proxy.cpp
  DEPS chsync_pipe chsync_test_env chsync_mysql
  LABELS integration)
