# Installs the build tree into a fresh prefix, then configures, builds and runs the consumer
# project against it, as someone using an installed tunekit would.
# Usage: cmake -DBUILD_DIR=<tunekit build> -DWORK_DIR=<scratch> -DGENERATOR=<generator>
#              -DCXX=<compiler> -P run.cmake
foreach(var BUILD_DIR WORK_DIR GENERATOR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run.cmake: -D${var}=... is required")
  endif()
endforeach()
set(prefix "${WORK_DIR}/prefix")
set(consumer_build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}")

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${what} failed (${status}):\n${out}")
  endif()
  message(STATUS "${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")
foreach(file include/tunekit/tunekit.hpp include/tunekit/report.hpp include/tunekit/cl/client.hpp
             include/tunekit/ops/matmul.hpp lib/cmake/tunekit/tunekitConfig.cmake
             lib/cmake/tunekit/tunekitConfigVersion.cmake lib/cmake/tunekit/tunekitTargets.cmake
             share/tunekit/kernels/matmul_tiled.cl bin/tunekit libexec/tunekit-build-helper
             lib/cmake/tunekit/TunekitProgramKernels.cmake
             lib/cmake/tunekit/tunekit_embed_program_kernel.cmake)
  if(NOT EXISTS "${prefix}/${file}")
    message(FATAL_ERROR "the install has no ${file}")
  endif()
endforeach()
# The consumer is built from a copy of its sources, removed before it runs: its kernel file
# travels inside the program (tunekit_embed_kernels), as it must on another machine.
set(source "${WORK_DIR}/src")
file(COPY "${CMAKE_CURRENT_LIST_DIR}/" DESTINATION "${source}" PATTERN run.cmake EXCLUDE)
# No optimisation: this checks the package, not the code, and -O0 compiles fastest.
# CXX_FLAGS (optional): the tunekit build's flags. A sanitizer build installs instrumented
# libraries, which link only into a consumer compiled with the same -fsanitize flags.
run("configure" ${CMAKE_COMMAND} -S "${source}" -B "${consumer_build}" -G "${GENERATOR}"
    -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_BUILD_TYPE= -DCMAKE_PREFIX_PATH=${prefix}
    "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}")
run("build" ${CMAKE_COMMAND} --build "${consumer_build}")
run("run" "${consumer_build}/consumer")
message(STATUS "${last_output}")
file(REMOVE_RECURSE "${source}")
file(MAKE_DIRECTORY "${WORK_DIR}/elsewhere")
execute_process(COMMAND "${consumer_build}/consumer_cl" WORKING_DIRECTORY "${WORK_DIR}/elsewhere"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "run the OpenCL consumer, its sources gone, from another directory "
                      "failed (${status}):\n${out}")
endif()
message(STATUS "run the OpenCL consumer from another directory: ok\n${out}")
# The installed build helper runs (it is for GPU devices, docs/opencl.md "Building in helper
# processes"; its builds are tested in tests/cl/test_build_processes.cpp): without the socket a
# tuning process gives it, it says what it is and exits 2.
execute_process(COMMAND "${prefix}/libexec/tunekit-build-helper"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT status EQUAL 2 OR NOT out MATCHES "not for people")
  message(FATAL_ERROR "the installed tunekit-build-helper did not answer as expected (${status}):\n${out}")
endif()
message(STATUS "the installed build helper: ok")
