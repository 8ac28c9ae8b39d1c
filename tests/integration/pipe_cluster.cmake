# `chsync run` into a ClickHouse cluster (two 18.16 nodes and ZooKeeper from scripts/test-servers):
# both topologies end to end, bad cluster settings, a node killed and ZooKeeper stopped mid-stream.
# Every test holds RESOURCE_LOCK chsync_cluster, because the fault tests stop shared servers.
chsync_test(pipe_cluster_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/pipe_cluster_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration
  RESOURCE_LOCK chsync_cluster)
if(TARGET pipe_cluster_test)
  add_dependencies(pipe_cluster_test chsync)
endif()
