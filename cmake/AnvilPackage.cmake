# The installed package: a CMake config package (AnvilConfig.cmake, its
# version file and the exported targets) and a pkg-config file, as CMake's
# packaging guide lays them out. The targets' own install rules sit beside
# them (api/, core/, plugins/, pjrt/, tools/).
include(CMakePackageConfigHelpers)

install(EXPORT AnvilTargets NAMESPACE Anvil:: DESTINATION ${ANVIL_INSTALL_CMAKEDIR} COMPONENT Development)

configure_package_config_file(cmake/AnvilConfig.cmake.in ${CMAKE_BINARY_DIR}/AnvilConfig.cmake
                              INSTALL_DESTINATION ${ANVIL_INSTALL_CMAKEDIR}
                              PATH_VARS ANVIL_INSTALL_PLUGINDIR)
# The package version is the project's. Within one major, the ABI only
# grows (docs/abi.md), so any later minor satisfies a request.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/AnvilConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${CMAKE_BINARY_DIR}/AnvilConfig.cmake ${CMAKE_BINARY_DIR}/AnvilConfigVersion.cmake
        DESTINATION ${ANVIL_INSTALL_CMAKEDIR} COMPONENT Development)

set(ANVIL_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
# From lib/pkgconfig back to the prefix: "../..".
file(RELATIVE_PATH ANVIL_PC_PREFIX ${CMAKE_INSTALL_PREFIX}/${ANVIL_INSTALL_PKGCONFIGDIR} ${CMAKE_INSTALL_PREFIX})
string(REGEX REPLACE "/$" "" ANVIL_PC_PREFIX "${ANVIL_PC_PREFIX}")
configure_file(cmake/anvil.pc.in ${CMAKE_BINARY_DIR}/anvil.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/anvil.pc DESTINATION ${ANVIL_INSTALL_PKGCONFIGDIR} COMPONENT Development)
