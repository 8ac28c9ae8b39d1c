# `chsync tables add|remove --state DIR PATTERN`: tables added to and removed from a pipe's
# selection (a control request, state/control.h, docs/table-control.md).
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/tables_command.cpp)
