# tunekit_embed_kernels(<target> [BASE_DIR <dir>] FILES <file>...): compiles your OpenCL files into
# <target> as text, so that the program needs no kernel file at run time and runs from any
# directory and on any machine. In C++, tunekit::cl::KernelSpec::from_embedded("softmax.cl",
# options, kernel) finds a file by its name (its path relative to BASE_DIR when one is given, so
# "conv/common.h"); #include "x.h" in an embedded file finds an embedded x.h. Relative FILES are
# relative to the current source directory. Editing a file regenerates only its own .cpp.
# Installed with the tunekit package (find_package(tunekit) defines the function). <target>
# links tunekit::cl; it may be an executable, a shared library or a static library (whose
# users' links keep the embedded files: see the --undefined option below).
set(_tunekit_embed_program_script "${CMAKE_CURRENT_LIST_DIR}/tunekit_embed_program_kernel.cmake")

function(tunekit_embed_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "BASE_DIR" "FILES")
  if(NOT TARGET ${target})
    message(FATAL_ERROR "tunekit_embed_kernels: '${target}' is not a target")
  endif()
  if(arg_UNPARSED_ARGUMENTS OR NOT arg_FILES)
    message(FATAL_ERROR "tunekit_embed_kernels(${target} ...): usage: "
                        "tunekit_embed_kernels(<target> [BASE_DIR <dir>] FILES <file>...)")
  endif()
  set(out_dir "${CMAKE_CURRENT_BINARY_DIR}/tunekit_embedded/${target}")
  file(MAKE_DIRECTORY "${out_dir}")
  get_target_property(type ${target} TYPE)
  foreach(file IN LISTS arg_FILES)
    get_filename_component(path "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    if(arg_BASE_DIR)
      get_filename_component(base "${arg_BASE_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      file(RELATIVE_PATH name "${base}" "${path}")
    else()
      get_filename_component(name "${path}" NAME)
    endif()
    # The name becomes a C string literal and a file name: plain characters only.
    if(NOT name MATCHES "^[A-Za-z0-9_.+-][A-Za-z0-9_./+-]*$" OR name MATCHES "(^|/)\\.\\.(/|$)")
      message(FATAL_ERROR "tunekit_embed_kernels(${target}): '${name}' (from ${path}) is not a "
                          "name it can embed: letters, digits, '_', '.', '+', '-' and '/', "
                          "inside BASE_DIR")
    endif()
    string(MAKE_C_IDENTIFIER "tunekit_kernel_${target}_${name}" symbol)
    set(output "${out_dir}/${symbol}.cpp")
    add_custom_command(
      OUTPUT "${output}"
      COMMAND "${CMAKE_COMMAND}" -DINPUT=${path} -DOUTPUT=${output} -DNAME=${name}
              -DSYMBOL=${symbol} -P "${_tunekit_embed_program_script}"
      DEPENDS "${path}" "${_tunekit_embed_program_script}"
      COMMENT "Embedding OpenCL source ${name} into ${target}"
      VERBATIM)
    target_sources(${target} PRIVATE "${output}")
    # A static library's object is linked only when something refers to it: its users' links
    # ask for the file's symbol, so that its registration is always kept.
    if(type STREQUAL "STATIC_LIBRARY")
      target_link_options(${target} INTERFACE "LINKER:--undefined=${symbol}")
    endif()
  endforeach()
endfunction()
