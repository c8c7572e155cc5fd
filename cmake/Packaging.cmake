# Install rules: a relocatable package. find_package(fp8gemm 0.1 CONFIG) gives the imported
# target fp8gemm::fp8gemm; pkg-config gives `pkg-config --cflags --libs fp8gemm`. The library
# and the CLI find each other through RUNPATHs relative to $ORIGIN, so the prefix can move.
include(CMakePackageConfigHelpers)

set(FP8GEMM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/fp8gemm)
file(RELATIVE_PATH FP8GEMM_BIN_TO_LIB /${CMAKE_INSTALL_BINDIR} /${CMAKE_INSTALL_LIBDIR})

set_target_properties(fp8gemm PROPERTIES INSTALL_RPATH "$ORIGIN")
set_target_properties(fp8gemm_cli PROPERTIES INSTALL_RPATH "$ORIGIN/${FP8GEMM_BIN_TO_LIB}")

install(TARGETS fp8gemm EXPORT fp8gemmTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS fp8gemm_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY include/fp8gemm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT fp8gemmTargets NAMESPACE fp8gemm:: DESTINATION ${FP8GEMM_CMAKE_DIR})
configure_package_config_file(cmake/fp8gemmConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/fp8gemmConfig.cmake INSTALL_DESTINATION ${FP8GEMM_CMAKE_DIR})
# 0.x: a minor version may change the ABI (README, "Versions"), so 0.1 accepts 0.1.*.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/fp8gemmConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fp8gemmConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/fp8gemmConfigVersion.cmake
  DESTINATION ${FP8GEMM_CMAKE_DIR})

# The build tree is a package too (find_package with fp8gemm_DIR set to the build directory).
export(EXPORT fp8gemmTargets NAMESPACE fp8gemm:: FILE ${CMAKE_CURRENT_BINARY_DIR}/fp8gemmTargets.cmake)

# pkg-config: the prefix is found from the .pc file's own place (${pcfiledir}).
file(RELATIVE_PATH FP8GEMM_PC_TO_PREFIX /${CMAKE_INSTALL_LIBDIR}/pkgconfig /)
string(REGEX REPLACE "/$" "" FP8GEMM_PC_TO_PREFIX "${FP8GEMM_PC_TO_PREFIX}")
configure_file(cmake/fp8gemm.pc.in ${CMAKE_CURRENT_BINARY_DIR}/fp8gemm.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/fp8gemm.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
