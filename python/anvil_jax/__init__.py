"""Anvil as a JAX device.

JAX calls `initialize()` at start-up (this module is named under the
`jax_plugins` entry point); it registers Anvil's PJRT C API plugin,
libanvil_pjrt.so, under the platform name "anvil".
"""

from __future__ import annotations

import os
import pathlib
import sys
import sysconfig

PLATFORM = "anvil"
LIBRARY = "libanvil_pjrt.so"

# The PJRT C API version libanvil_pjrt.so implements, and the jaxlib that
# speaks exactly it.
PJRT_API_VERSION = (0, 112)
SUPPORTED_JAXLIB = "0.10.2"

__all__ = ["PLATFORM", "LIBRARY", "PJRT_API_VERSION", "SUPPORTED_JAXLIB", "candidate_paths", "library_path",
           "version_mismatch", "initialize"]


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
    # CMake's GNUInstallDirs puts libraries in lib/, lib64/ or, for the
    # prefix /usr on Debian, lib/<multiarch triplet>/.
    multiarch = sysconfig.get_config_var("MULTIARCH")
    libdirs = ["lib", "lib64"] + ([f"lib/{multiarch}"] if multiarch else [])
    prefix = os.environ.get("ANVIL_PREFIX")
    for root in ([pathlib.Path(prefix)] if prefix else []) + [pathlib.Path(sys.prefix)]:
        paths.extend(root / libdir / LIBRARY for libdir in libdirs)
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


def version_mismatch(jaxlib_version: str) -> str | None:
    """What to tell a user whose jaxlib is not the one the plugin was built for."""
    if jaxlib_version == SUPPORTED_JAXLIB:
        return None
    major, minor = PJRT_API_VERSION
    return (f"anvil_jax: libanvil_pjrt.so implements PJRT C API {major}.{minor}, the version of jaxlib "
            f"{SUPPORTED_JAXLIB}; this is jaxlib {jaxlib_version}, which may speak another PJRT C API version. "
            f"jaxlib refuses a plugin of another major version and, with ENABLE_PJRT_COMPATIBILITY=0, of another "
            f"minor; install jaxlib=={SUPPORTED_JAXLIB} to be sure.")


def initialize() -> None:
    """Registers the plugin with JAX (called by JAX's plugin discovery)."""
    import warnings

    import jaxlib.version
    from jax._src import xla_bridge

    mismatch = version_mismatch(jaxlib.version.__version__)
    if mismatch:
        warnings.warn(mismatch, RuntimeWarning, stacklevel=2)

    options = {}
    plugin = os.environ.get("ANVIL_PJRT_PLUGIN")
    if plugin:
        options["anvil_plugin"] = plugin
    # The Anvil plugin's compile options (for the CPU plugin, default
    # "flush_denormals=true", as XLA's CPU client runs).
    compile_options = os.environ.get("ANVIL_PJRT_COMPILE_OPTIONS")
    if compile_options is not None:
        options["anvil_compile_options"] = compile_options
    xla_bridge.register_plugin(PLATFORM, library_path=library_path(), options=options)
    # JAX lowers donate_argnums to tf.aliasing_output / jax.buffer_donor
    # only for the platforms on this list; Anvil honours both (the plugin
    # donates what the program marks), so it belongs on it.
    from jax._src.interpreters import mlir

    if PLATFORM not in mlir._platforms_with_donation:
        mlir._platforms_with_donation.append(PLATFORM)
    try:
        _register_linalg_lowerings(mlir)
    except (ImportError, AttributeError) as e:  # another jax's internals: run without them
        warnings.warn(f"anvil_jax: eigh and svd are not available on Anvil with this jax ({e})", RuntimeWarning,
                      stacklevel=2)
    try:
        from . import scatter_windows

        scatter_windows.register(mlir, PLATFORM)
    except (ImportError, AttributeError) as e:
        warnings.warn(f"anvil_jax: scatters in FILL_OR_DROP mode write the in-bounds part of a window that hangs "
                      f"over an edge with this jax ({e})", RuntimeWarning, stacklevel=2)


def _register_linalg_lowerings(mlir) -> None:
    """eigh and svd for the anvil platform.

    JAX lowers them to LAPACK on CPU, to cuSOLVER on GPU and, on TPU, to
    QDWH iterations written in JAX itself (QR and Cholesky steps, and the
    "Qr" and "Eigh" custom calls for small blocks, which Anvil's reference
    evaluator runs). A plugin platform has no lowering at all, so Anvil
    takes the TPU ones.
    """
    from jax._src.lax import linalg as lax_linalg
    from jax._src.tpu.linalg import eigh as tpu_eigh
    from jax._src.tpu.linalg import svd as tpu_svd

    # QDWH splits the matrix until the blocks are small, then asks for the
    # "Eigh" custom call (Jacobi), which Anvil's evaluator runs.
    mlir.register_lowering(lax_linalg.eigh_p, tpu_eigh._eigh_tpu_lowering, platform=PLATFORM)
    mlir.register_lowering(lax_linalg.svd_p, tpu_svd._svd_tpu_lowering_rule, platform=PLATFORM)
