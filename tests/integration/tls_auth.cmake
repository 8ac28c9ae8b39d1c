# Issue 18: TLS for real (MariaDB mysql-full and ClickHouse 18.16 over HTTPS with the test CA of
# scripts/test-servers, a wrong CA, a REQUIRE SSL user, ssl-verify=0) and the ed25519 and
# mysql_native_password authentication plugins. A few seconds.
chsync_test(tls_auth_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/tls_auth_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration)
if(TARGET tls_auth_test)
  add_dependencies(tls_auth_test chsync)
endif()
