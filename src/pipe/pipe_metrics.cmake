# The pipe's Prometheus metrics (issue 16, docs/operations.md) and the binlog retention sampler.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pipe_metrics.cpp
                                   ${CMAKE_CURRENT_LIST_DIR}/retention_sample.cpp)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/pipe_metrics.cpp PROPERTIES
  COMPILE_DEFINITIONS "CHSYNC_VERSION=\"${PROJECT_VERSION}\"")

chsync_test(pipe_metrics_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipe_metrics_test.cpp
  DEPS chsync_pipe)
