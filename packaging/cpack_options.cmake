# Read by cpack (CPACK_PROJECT_CONFIG_FILE): the Debian package's paths are those of a build
# configured for /usr; any other prefix would give a package whose unit names the wrong paths.
if(CPACK_GENERATOR STREQUAL "DEB" AND NOT CPACK_PACKAGING_INSTALL_PREFIX STREQUAL "/usr")
  message(FATAL_ERROR "the Debian package needs a build configured with -DCMAKE_INSTALL_PREFIX=/usr "
                      "(this one has ${CPACK_PACKAGING_INSTALL_PREFIX})")
endif()
