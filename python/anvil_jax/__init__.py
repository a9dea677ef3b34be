"""Anvil as a JAX device.

JAX calls `initialize()` at start-up (this module is named under the
`jax_plugins` entry point); it registers Anvil's PJRT C API plugin,
libanvil_pjrt.so, under the platform name "anvil".
"""

from __future__ import annotations

import os
import pathlib
import sys

PLATFORM = "anvil"
LIBRARY = "libanvil_pjrt.so"

__all__ = ["PLATFORM", "LIBRARY", "candidate_paths", "library_path", "initialize"]


def candidate_paths() -> list[pathlib.Path]:
    """Where the plugin library is looked for, in order."""
    paths = []
    explicit = os.environ.get("ANVIL_PJRT_LIBRARY")
    if explicit:
        paths.append(pathlib.Path(explicit))
    # The build tree of the checkout this package was installed from (an
    # editable install keeps the package in python/ beside build/).
    checkout = pathlib.Path(__file__).resolve().parent.parent.parent
    build_dir = os.environ.get("ANVIL_BUILD_DIR", "build")
    paths.append((checkout / build_dir / "pjrt" / LIBRARY) if not os.path.isabs(build_dir)
                 else pathlib.Path(build_dir) / "pjrt" / LIBRARY)
    prefix = os.environ.get("ANVIL_PREFIX")
    if prefix:
        paths.append(pathlib.Path(prefix) / "lib" / LIBRARY)
    paths.append(pathlib.Path(sys.prefix) / "lib" / LIBRARY)
    return paths


def library_path() -> str:
    """The plugin library to load; FileNotFoundError naming every place tried."""
    tried = candidate_paths()
    for path in tried:
        if path.is_file():
            return str(path)
    raise FileNotFoundError(
        f"anvil_jax: {LIBRARY} not found; looked at " + ", ".join(str(p) for p in tried) +
        ". Build Anvil (bash scripts/build.sh) or set ANVIL_PJRT_LIBRARY to the library's path.")


def initialize() -> None:
    """Registers the plugin with JAX (called by JAX's plugin discovery)."""
    from jax._src import xla_bridge

    options = {}
    plugin = os.environ.get("ANVIL_PJRT_PLUGIN")
    if plugin:
        options["anvil_plugin"] = plugin
    xla_bridge.register_plugin(PLATFORM, library_path=library_path(), options=options)
    # JAX lowers donate_argnums to tf.aliasing_output / jax.buffer_donor
    # only for the platforms on this list; Anvil honours both (the plugin
    # donates what the program marks), so it belongs on it.
    from jax._src.interpreters import mlir

    if PLATFORM not in mlir._platforms_with_donation:
        mlir._platforms_with_donation.append(PLATFORM)
