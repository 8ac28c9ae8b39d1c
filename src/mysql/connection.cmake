# Unit tests of the source URL's parameters and of the TLS error messages (no server).
chsync_test(mysql_connection_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/connection_test.cpp
  DEPS chsync_mysql)
