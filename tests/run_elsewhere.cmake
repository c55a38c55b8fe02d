# Runs a program as it runs once shipped: copied out of the build tree into a fresh directory and
# started from another one, so that it can find nothing by a path of the build or the sources.
# Usage: cmake -DPROGRAM=<file> -DWORK_DIR=<scratch> -DEXPECT=<regex> -P run_elsewhere.cmake
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}/bin" "${WORK_DIR}/cwd")
get_filename_component(name "${PROGRAM}" NAME)
file(COPY "${PROGRAM}" DESTINATION "${WORK_DIR}/bin")
execute_process(COMMAND "${WORK_DIR}/bin/${name}" WORKING_DIRECTORY "${WORK_DIR}/cwd"
                RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(REMOVE_RECURSE "${WORK_DIR}")
if(NOT status EQUAL 0 OR NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${name}, copied to ${WORK_DIR}/bin and run from ${WORK_DIR}/cwd: "
                      "exit ${status}, expected output matching '${EXPECT}':\n${out}")
endif()
message(STATUS "${name} from another directory: ok\n${out}")
