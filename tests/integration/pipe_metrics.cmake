# The pipe's Prometheus metrics (issue 16) from a pipe run in the test's own process: row changes
# per table and kind, lag, events, batches and schema changes, read from pipe::Metrics().
chsync_test(pipe_metrics_integration_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipe_metrics_test.cpp
  DEPS chsync_metrics chsync_pipe chsync_pipe_compare chsync_test_env
  LABELS integration)
