# Issue 20: a restart on the server that wrote the checkpoint resumes by file:position, anything
# else by GTID (src/position/resume_position.h). The tests reset and purge the binlogs of the MariaDB
# primary/replica pair (replication_pair.cmake): RESOURCE_LOCK mysql_pair, one at a time.
find_package(nlohmann_json REQUIRED)
chsync_test(resume_position_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/resume_position_test.cpp ${CMAKE_CURRENT_LIST_DIR}/tcp_proxy.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql nlohmann_json::nlohmann_json
  LABELS integration
  RESOURCE_LOCK mysql_pair)
if(TARGET resume_position_integration_test)
  add_dependencies(resume_position_integration_test chsync)
endif()
