# SSH tunnels end to end against the OpenSSH server of scripts/test-servers (sshd): snapshot and
# streaming through a tunnel to the source and one to the destination, the bastion killed and
# started again, wrong host and user keys refused by run and check (docs/configuration.md).
# RESOURCE_LOCK chsync_sshd: one test kills the bastion, which every test here goes through.
chsync_test(ssh_tunnel_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/ssh_tunnel_test.cpp
  DEPS chsync_pipe_compare chsync_test_env
  LABELS integration
  RESOURCE_LOCK chsync_sshd)
if(TARGET ssh_tunnel_test)
  add_dependencies(ssh_tunnel_test chsync)
endif()
