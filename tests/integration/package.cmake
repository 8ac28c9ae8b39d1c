# Issue 19: the Debian package built from this build (cpack), checked by lintian, its unit by
# systemd-analyze verify, and the installed binary run from a scratch root as the service user,
# with a configuration in the packaged layout and the passwords in an environment file, against
# the test servers. Needs a build configured with -DCMAKE_INSTALL_PREFIX=/usr (scripts/test's).
add_test(NAME package_test
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/package_test.sh ${PROJECT_BINARY_DIR})
set_tests_properties(package_test PROPERTIES LABELS integration TIMEOUT 300)
