# Embeds the device headers under kernels/ into the library as string literals,
# so that NVRTC compiles from memory and nothing is read from disk at run time.
# Also records a SHA-256 over all of them, which goes into every cache key.
#
#   fp8gemm_embed_kernels(OUTPUT <file.cpp> ROOT <dir> FILES <name>...
#                         [PUBLIC_ROOT <dir> PUBLIC_FILES <name>...])
#
# Each header is embedded under its path relative to its root, which is the name kernels
# #include it by. PUBLIC_FILES are device headers of the public include tree (installed for
# users' own kernels, e.g. fp8gemm/device/quantize.cuh) that the library's kernels include
# too: embedding them under the name users write keeps one copy of their text.

set(_FP8GEMM_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_kernels_script.cmake)

function(fp8gemm_embed_kernels)
  cmake_parse_arguments(ARG "" "OUTPUT;ROOT;PUBLIC_ROOT" "FILES;PUBLIC_FILES" ${ARGN})
  if(ARG_PUBLIC_FILES AND NOT ARG_PUBLIC_ROOT)
    message(FATAL_ERROR "fp8gemm_embed_kernels: PUBLIC_FILES needs PUBLIC_ROOT")
  endif()
  # The embedding script reads every header from one root, so the headers of both roots are
  # first copied into one staging tree under their include names (rebuilt from scratch each
  # time, so that nothing stale is left in it).
  set(_stage ${ARG_OUTPUT}.headers)
  set(_names "")
  set(_deps "")
  set(_copies COMMAND ${CMAKE_COMMAND} -E rm -rf ${_stage})
  foreach(_set IN ITEMS "ROOT;FILES" "PUBLIC_ROOT;PUBLIC_FILES")
    list(GET _set 0 _root_arg)
    list(GET _set 1 _files_arg)
    foreach(f IN LISTS ARG_${_files_arg})
      if(f IN_LIST _names)
        message(FATAL_ERROR "fp8gemm_embed_kernels: ${f} is listed twice (include names must be unique)")
      endif()
      list(APPEND _names ${f})
      list(APPEND _deps ${ARG_${_root_arg}}/${f})
      get_filename_component(_dir ${_stage}/${f} DIRECTORY)
      list(APPEND _copies COMMAND ${CMAKE_COMMAND} -E make_directory ${_dir}
                          COMMAND ${CMAKE_COMMAND} -E copy ${ARG_${_root_arg}}/${f} ${_stage}/${f})
    endforeach()
  endforeach()
  string(REPLACE ";" "|" _files "${_names}")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    ${_copies}
    COMMAND ${CMAKE_COMMAND} -DROOT=${_stage} "-DFILES=${_files}" -DOUTPUT=${ARG_OUTPUT}
            -P ${_FP8GEMM_EMBED_SCRIPT}
    DEPENDS ${_deps} ${_FP8GEMM_EMBED_SCRIPT}
    COMMENT "Embedding kernel headers"
    VERBATIM)
endfunction()
