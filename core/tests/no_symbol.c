/* A shared library that is not an Anvil plugin: it lacks anvil_plugin_get_api. */
int anvil_not_a_plugin(void) { return 42; }
