# `chsync verify` (issue 18): compares the source tables with their ClickHouse copies
# (verify/verifier.h, docs/verify.md).
target_sources(chsync PRIVATE ${CMAKE_CURRENT_LIST_DIR}/verify_command.cpp)
target_link_libraries(chsync PRIVATE chsync_config chsync_verify)
