# Checks that a code block of a doc is exactly an example file: the block between
# "<!-- begin <name> -->" and "<!-- end <name> -->" (its ``` fences excluded).
# Usage: cmake -DDOC=<doc.md> -DEXAMPLE=<file> -DNAME=<name in the markers> [-DLANG=<fence
# language>, default cpp] -P doc_example.cmake
if(NOT DEFINED LANG)
  set(LANG cpp)
endif()
file(READ "${DOC}" doc)
file(READ "${EXAMPLE}" example)
string(FIND "${doc}" "<!-- begin ${NAME} -->\n```${LANG}\n" begin)
string(FIND "${doc}" "```\n<!-- end ${NAME} -->" end)
if(begin EQUAL -1 OR end EQUAL -1)
  message(FATAL_ERROR "${DOC} has no block marked '${NAME}'")
endif()
string(LENGTH "<!-- begin ${NAME} -->\n```${LANG}\n" marker)
math(EXPR from "${begin} + ${marker}")
math(EXPR length "${end} - ${from}")
string(SUBSTRING "${doc}" ${from} ${length} block)
if(NOT block STREQUAL example)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/doc_block.cpp" "${block}")
  message(FATAL_ERROR "the code in ${DOC} differs from ${EXAMPLE}: compare with "
                      "${CMAKE_CURRENT_BINARY_DIR}/doc_block.cpp")
endif()
message(STATUS "${DOC}: its code is ${EXAMPLE}")
