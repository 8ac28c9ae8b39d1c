# Issue 37: managed MySQL (Amazon RDS, Aurora, Google Cloud SQL, Azure) recognised from the server's
# variables, and `chsync check`'s decisions on a source's settings as a pure function of them.
target_sources(chsync_mysql PRIVATE ${CMAKE_CURRENT_LIST_DIR}/managed_provider.cpp
                                    ${CMAKE_CURRENT_LIST_DIR}/source_verdict.cpp)

chsync_test(source_verdict_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/source_verdict_test.cpp
  DEPS chsync_mysql)
