# libFuzzer target for the MySQL DDL lexer/parser, the schema tracker applying what parses, and
# the tracker's state reader. Corpus: tests/data/ddl (run with -dict=… optional):
#   build/fuzz/ddl_parser_fuzzer -max_len=4096 corpus_dir ../tests/data/ddl
# Crashers found are kept under tests/data/ddl/crashers/ and replayed by schema_test.
if(TARGET chsync_schema)
  add_executable(ddl_parser_fuzzer ${CMAKE_CURRENT_LIST_DIR}/ddl_parser_fuzzer.cpp)
  target_compile_options(ddl_parser_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_options(ddl_parser_fuzzer PRIVATE -fsanitize=fuzzer,address,undefined)
  target_compile_options(chsync_schema PRIVATE -fsanitize=fuzzer-no-link,address,undefined)
  target_link_libraries(ddl_parser_fuzzer PRIVATE chsync_schema)
endif()
