# `chsync run` of a keyless table whose key holds a Nullable ENUM that declares '' into the sharded
# test cluster (two 18.16 nodes and ZooKeeper from scripts/test-servers), rows routed by chsync and
# through the Distributed table. Holds RESOURCE_LOCK chsync_cluster: pipe_cluster_test stops the
# servers it uses.
chsync_test(enum_key_cluster_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/enum_key_cluster_test.cpp
  DEPS chsync_pipe_compare chsync_test_env chsync_mysql
  LABELS integration
  RESOURCE_LOCK chsync_cluster)
if(TARGET enum_key_cluster_test)
  add_dependencies(enum_key_cluster_test chsync)
endif()
