# Compiles SOURCE (which must fail) and checks that the compiler's first error line matches every
# regular expression in EXPECT (a ;-list) and that it reports at most MAX_ERRORS errors in all.
# Usage: cmake -DCXX=<compiler> -DINCLUDE=<dir> -DSOURCE=<file> -DEXPECT=<regex;...>
#              -DMAX_ERRORS=<n> -P check_first_error.cmake
execute_process(COMMAND ${CXX} -std=c++20 -fsyntax-only -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE result ERROR_VARIABLE errors OUTPUT_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "${SOURCE} compiled, but it must not")
endif()
# A line may hold a ';' (clang quotes a failed requirement whole): kept apart from the list's.
string(REPLACE ";" "<semicolon>" lines "${errors}")
string(REPLACE "\n" ";" lines "${lines}")
set(first "")
set(count 0)
foreach(line IN LISTS lines)
  string(REPLACE "<semicolon>" ";" line "${line}")
  if(line MATCHES "error:")
    if(first STREQUAL "")
      set(first "${line}")
    endif()
    math(EXPR count "${count} + 1")
  endif()
endforeach()
foreach(regex IN LISTS EXPECT)
  if(NOT first MATCHES "${regex}")
    message(FATAL_ERROR "the first error does not match '${regex}':\n${first}\n\nall of it:\n${errors}")
  endif()
endforeach()
if(count GREATER MAX_ERRORS)
  message(FATAL_ERROR "${count} errors (at most ${MAX_ERRORS} expected):\n${errors}")
endif()
message(STATUS "first error: ${first} (${count} errors in all)")
