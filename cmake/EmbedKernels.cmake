# Embeds the device headers under kernels/ into the library as string literals,
# so that NVRTC compiles from memory and nothing is read from disk at run time.
# Also records a SHA-256 over all of them, which goes into every cache key.

set(_FP8GEMM_EMBED_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_kernels_script.cmake)

function(fp8gemm_embed_kernels)
  cmake_parse_arguments(ARG "" "OUTPUT;ROOT" "FILES" ${ARGN})
  set(_deps "")
  foreach(f IN LISTS ARG_FILES)
    list(APPEND _deps ${ARG_ROOT}/${f})
  endforeach()
  string(REPLACE ";" "|" _files "${ARG_FILES}")
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DROOT=${ARG_ROOT} "-DFILES=${_files}" -DOUTPUT=${ARG_OUTPUT}
            -P ${_FP8GEMM_EMBED_SCRIPT}
    DEPENDS ${_deps} ${_FP8GEMM_EMBED_SCRIPT}
    COMMENT "Embedding kernel headers"
    VERBATIM)
endfunction()
