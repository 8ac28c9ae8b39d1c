# Control requests of a running pipe (control.h): `chsync resync --table`, `pause` and `resume` leave
# a request file in the state directory; the pipe carries it out once and writes its outcome.
target_sources(chsync_pipe PRIVATE ${CMAKE_CURRENT_LIST_DIR}/control.cpp)

chsync_test(control_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/control_test.cpp
  DEPS chsync_pipe)
