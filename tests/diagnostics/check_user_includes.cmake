# A user's file that includes tunekit/cl.hpp and tunekit/ops/matmul.hpp (USER) must not pull in
# the standard headers that tunekit's public headers keep out (issue 28: the compile time of a
# user's file; docs/benchmarks.md) unless the floor (FLOOR: OpenCL-CLHPP and Hana's struct
# macro, which the public API needs) pulls them in already on this system.
# Usage: cmake -DCXX=<compiler> -DINCLUDE_DIRS=<dir;...> [-DCXX_FLAGS=<flags>] -DUSER=<file>
#              -DFLOOR=<file> -P check_user_includes.cmake   (GCC or Clang: it reads -H)
cmake_minimum_required(VERSION 3.20)
set(kept_out filesystem thread mutex chrono sstream charconv cmath atomic stop_token semaphore
    unordered_map algorithm)
list(TRANSFORM INCLUDE_DIRS PREPEND -I OUTPUT_VARIABLE include_flags)
separate_arguments(flags UNIX_COMMAND "${CXX_FLAGS}")
function(headers_of source out)
  execute_process(COMMAND ${CXX} ${flags} -std=c++20 -E -H ${include_flags}
                          -DCL_HPP_TARGET_OPENCL_VERSION=300 -DCL_HPP_MINIMUM_OPENCL_VERSION=200
                          ${source} -o /dev/null
                  RESULT_VARIABLE result ERROR_VARIABLE listing)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${source} does not preprocess:\n${listing}")
  endif()
  set(found "")
  foreach(name IN LISTS kept_out)
    if(listing MATCHES "[/\\\\]${name}\n")
      list(APPEND found ${name})
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
headers_of(${FLOOR} floor)
headers_of(${USER} user)
set(extra "")
foreach(name IN LISTS user)
  if(NOT name IN_LIST floor)
    list(APPEND extra "<${name}>")
  endif()
endforeach()
if(extra)
  list(JOIN extra ", " text)
  message(FATAL_ERROR "${USER} includes ${text} through tunekit's headers (the floor: ${floor})")
endif()
message(STATUS "none of <${kept_out}> beyond the floor's (${floor})")
