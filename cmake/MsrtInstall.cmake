# `cmake --install` gives C++ users find_package(msrt) and msrt::msrt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS msrt EXPORT msrtTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/msrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The generated op API (src/ops/gen/gen_ops_header.cc).
install(FILES ${PROJECT_BINARY_DIR}/include/msrt/ops.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/msrt)
install(EXPORT msrtTargets NAMESPACE msrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/msrt)
configure_package_config_file(cmake/msrtConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/msrtConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/msrt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/msrtConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/msrtConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/msrtConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/msrt)
