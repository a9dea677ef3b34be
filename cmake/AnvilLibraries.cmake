# Conventions shared by the libraries Anvil ships: where each is installed,
# what each exports, and how a device plugin is built.

include(GNUInstallDirs)
# An installed libanvil.so finds plugins by name in anvil_plugins/ beside
# itself, as the build's does (core/abi_client.cc, SearchPath).
set(ANVIL_INSTALL_PLUGINDIR ${CMAKE_INSTALL_LIBDIR}/anvil_plugins)
set(ANVIL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Anvil)

# Registers a test that fails when the shared library `target` defines any
# dynamic symbol beyond its ABI: `HEADER h PREFIX p` (every function the
# header declares whose name starts with p) or `SYMBOLS name...`.
function(anvil_add_export_test target)
  cmake_parse_arguments(ARG "" "HEADER;PREFIX" "SYMBOLS" ${ARGN})
  if(NOT ANVIL_BUILD_TESTS)
    return()
  endif()
  if(ARG_HEADER)
    set(abi --header ${ARG_HEADER} ${ARG_PREFIX})
  else()
    set(abi ${ARG_SYMBOLS})
  endif()
  add_test(NAME ${target}_exports_only_its_abi
           COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/check_exports.sh --nm ${CMAKE_NM} $<TARGET_FILE:${target}> ${abi})
  set_tests_properties(${target}_exports_only_its_abi PROPERTIES LABELS unit)
endfunction()

# Makes `target` (a MODULE library) the device plugin `name`:
# libanvil_plugin_<name>.so in the build's plugin folder beside libanvil.so,
# exporting anvil_plugin_get_api and nothing else.
function(anvil_device_plugin target name)
  set(map ${PROJECT_SOURCE_DIR}/plugins/plugin.map)
  set_target_properties(${target} PROPERTIES PREFIX "" OUTPUT_NAME "libanvil_plugin_${name}"
                        LIBRARY_OUTPUT_DIRECTORY ${ANVIL_PLUGIN_OUTPUT_DIR}
                        CXX_VISIBILITY_PRESET hidden
                        LINK_DEPENDS ${map})
  # Hidden visibility covers the plugin's own code only; the version script
  # also keeps the static libraries' and libstdc++'s instances local.
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}")
  anvil_add_export_test(${target} SYMBOLS anvil_plugin_get_api)
  install(TARGETS ${target} LIBRARY DESTINATION ${ANVIL_INSTALL_PLUGINDIR} COMPONENT Runtime)
endfunction()

# ANVIL_ABI_MAJOR/MINOR and ANVIL_PLUGIN_ABI_MAJOR/MINOR, read from the
# public headers: libanvil's SONAME and the installed package's version
# variables follow the headers and cannot drift from them.
function(anvil_read_abi_version header prefix)
  # A version bump in the header reconfigures, so the SONAME follows it.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${header})
  foreach(part MAJOR MINOR)
    file(STRINGS ${header} line REGEX "^#define ${prefix}_${part} [0-9]+$")
    string(REGEX REPLACE "^#define ${prefix}_${part} " "" value "${line}")
    if(NOT value MATCHES "^[0-9]+$")
      message(FATAL_ERROR "${header} has no '#define ${prefix}_${part} N'")
    endif()
    set(${prefix}_${part} ${value} PARENT_SCOPE)
  endforeach()
endfunction()
anvil_read_abi_version(${PROJECT_SOURCE_DIR}/api/anvil/anvil.h ANVIL_ABI)
anvil_read_abi_version(${PROJECT_SOURCE_DIR}/api/anvil/anvil_plugin.h ANVIL_PLUGIN_ABI)
