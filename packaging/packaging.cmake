# How chsync installs (`cmake --install`) and its Debian package (`cpack -G DEB`), issue 19.
#
# Layout, for CMAKE_INSTALL_PREFIX /usr (what the package uses):
#   /usr/bin/chsync                      the program
#   /etc/chsync/example.yaml             an example pipe configuration (a conffile)
#   /lib/systemd/system/chsync@.service  the template unit: chsync@NAME runs one pipe
#   /usr/share/doc/chsync/               README.md, docs/*, copyright, changelog.gz
#   /usr/share/man/man1/chsync.1.gz
# Another prefix puts the configuration in PREFIX/etc/chsync and the unit in
# PREFIX/lib/systemd/system, and the unit names PREFIX/bin/chsync. The prefix is chosen when
# configuring: `cmake --install --prefix` moves the files but not the paths written in the unit.
#
# The package is made from a build configured with -DCMAKE_INSTALL_PREFIX=/usr, once chsync is
# built (cpack installs what is built and builds nothing itself):
#   ninja -C build chsync && cpack --config build/CPackConfig.cmake -B build/package
# gives build/package/chsync_VERSION_ARCH.deb. Its dependencies are the shared libraries the
# binary links (dpkg-shlibdeps) and adduser, for the chsync system user its postinst creates.
include(GNUInstallDirs)

if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(CHSYNC_SYSTEMD_UNIT_DIR /lib/systemd/system)
else()
  set(CHSYNC_SYSTEMD_UNIT_DIR ${CMAKE_INSTALL_PREFIX}/lib/systemd/system)
endif()
set(CHSYNC_CONFIG_DIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/chsync)
set(CHSYNC_BIN ${CMAKE_INSTALL_FULL_BINDIR}/chsync)
set(CHSYNC_DOC_DIR ${CMAKE_INSTALL_FULL_DOCDIR})
set(CHSYNC_DEB_VERSION ${PROJECT_VERSION})
set(CHSYNC_PACKAGE_MAINTAINER "chsync maintainers <maintainers@users.noreply.a-seed-6681e9af.example>"
  CACHE STRING "Maintainer field of the Debian package and its changelog")
string(TIMESTAMP CHSYNC_CHANGELOG_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)

set(chsync_pkg ${PROJECT_BINARY_DIR}/packaging)
configure_file(${CMAKE_CURRENT_LIST_DIR}/chsync@.service.in ${chsync_pkg}/chsync@.service @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/conffiles.in ${chsync_pkg}/conffiles @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/chsync.1 ${chsync_pkg}/chsync.1 @ONLY)
configure_file(${CMAKE_CURRENT_LIST_DIR}/changelog.in ${chsync_pkg}/changelog @ONLY)
# Debian wants the manual page and the changelog compressed with gzip -9n (no name, no time).
foreach(doc chsync.1 changelog)
  execute_process(COMMAND gzip -9nf ${doc} WORKING_DIRECTORY ${chsync_pkg} RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip ${chsync_pkg}/${doc} failed")
  endif()
endforeach()

install(TARGETS chsync RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/example.yaml DESTINATION ${CHSYNC_CONFIG_DIR})
install(FILES ${chsync_pkg}/chsync@.service DESTINATION ${CHSYNC_SYSTEMD_UNIT_DIR})
install(FILES ${chsync_pkg}/chsync.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
file(GLOB chsync_docs ${PROJECT_SOURCE_DIR}/docs/*.md ${PROJECT_SOURCE_DIR}/docs/*.json
  ${PROJECT_SOURCE_DIR}/docs/*.yml ${PROJECT_SOURCE_DIR}/docs/*.png)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${chsync_docs} ${CMAKE_CURRENT_LIST_DIR}/copyright
  ${chsync_pkg}/changelog.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME chsync)
set(CPACK_PACKAGE_VERSION ${CHSYNC_DEB_VERSION})
set(CPACK_PACKAGE_CONTACT "${CHSYNC_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "replicate MySQL and MariaDB into ClickHouse")
set(CPACK_PACKAGE_DESCRIPTION_FILE ${CMAKE_CURRENT_LIST_DIR}/description.txt)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
# The configuration and the unit install to absolute paths (/etc, /lib): stage with DESTDIR.
set(CPACK_SET_DESTDIR ON)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION database)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# procps: /bin/kill, the unit's ExecReload (SIGHUP: `tables:` read again).
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser, procps")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_LIST_DIR}/postinst ${CMAKE_CURRENT_LIST_DIR}/postrm
  ${chsync_pkg}/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_PROJECT_CONFIG_FILE ${CMAKE_CURRENT_LIST_DIR}/cpack_options.cmake)
include(CPack)
