# The MariaDB GTID primary/replica pair of scripts/test-servers (mysql-primary, mysql-replica)
# works as failover tests need it: replication, promotion after the primary was killed, a
# restarted primary, ReplicationPair::Reset() (replication_pair.h, in chsync_test_env).
#
# Every test that uses the pair kills, promotes or resets servers that all pair tests share: each
# must hold ctest's RESOURCE_LOCK mysql_pair (as every test of this binary does), so that they run
# one at a time. A test binary with other tests too registers its pair tests apart, as
# pipe_correctness.cmake does with gtest_discover_tests(... TEST_FILTER ... RESOURCE_LOCK ...).
chsync_test(replication_pair_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/replication_pair_test.cpp
  DEPS chsync_test_env chsync_mysql
  LABELS integration
  RESOURCE_LOCK mysql_pair)
