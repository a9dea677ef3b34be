# Conventions shared by the libraries Anvil ships: what each exports, and
# how a device plugin is built.

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
endfunction()
