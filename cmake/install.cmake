# Installs the library, the public headers, a pkg-config file and a CMake package, so that a user's
# program finds pscan with find_package(pscan) or pkg-config --cflags --libs pscan.
include(CMakePackageConfigHelpers)

install(TARGETS pscan pscan_shared EXPORT pscanTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  PUBLIC_HEADER DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT pscanTargets NAMESPACE pscan:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pscan)

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/pscanConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/pscanConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pscan)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/pscanConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pscanConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/pscanConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pscan)

# pkg-config: a static pscan needs its backends' libraries on the user's link line too.
set(PSCAN_PC_LIBS_PRIVATE "-lpthread -lm")
if(PSCAN_HAVE_CUDA)
  string(APPEND PSCAN_PC_LIBS_PRIVATE " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lnvrtc -lstdc++")
endif()
if(PSCAN_HAVE_OPENCL)
  string(APPEND PSCAN_PC_LIBS_PRIVATE " -lOpenCL")
endif()
# Relocatable: the prefix is found from the .pc file's own place (pkg-config's ${pcfiledir}), so an installed
# tree works wherever it is moved or copied; the rpath lets programs linked against libpscan.so run.
file(RELATIVE_PATH PSCAN_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
configure_file(${CMAKE_CURRENT_LIST_DIR}/pscan.pc.in ${CMAKE_CURRENT_BINARY_DIR}/pscan.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/pscan.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
