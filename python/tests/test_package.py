"""The anvil_jax package itself: finding the library, version checks."""

import os

import anvil_jax
import pytest


def test_library_is_found_in_the_build():
    path = anvil_jax.library_path()
    assert path.endswith("libanvil_pjrt.so") and os.path.isfile(path)


def test_missing_library_names_every_place_tried(monkeypatch, tmp_path):
    monkeypatch.setenv("ANVIL_PJRT_LIBRARY", str(tmp_path / "nowhere.so"))
    monkeypatch.setenv("ANVIL_BUILD_DIR", str(tmp_path / "no-build"))
    with pytest.raises(FileNotFoundError) as info:
        anvil_jax.library_path()
    message = str(info.value)
    assert str(tmp_path / "nowhere.so") in message
    assert str(tmp_path / "no-build" / "pjrt" / "libanvil_pjrt.so") in message
    assert "ANVIL_PJRT_LIBRARY" in message


@pytest.mark.parametrize("libdir", ["lib", "lib64", "lib/x86_64-linux-gnu"])
def test_an_installed_prefix_is_found_in_each_libdir_layout(monkeypatch, tmp_path, libdir):
    monkeypatch.delenv("ANVIL_PJRT_LIBRARY", raising=False)
    monkeypatch.setenv("ANVIL_BUILD_DIR", str(tmp_path / "no-build"))
    monkeypatch.setenv("ANVIL_PREFIX", str(tmp_path / "prefix"))
    monkeypatch.setattr(anvil_jax.sysconfig, "get_config_var",
                        lambda name: "x86_64-linux-gnu" if name == "MULTIARCH" else None)
    installed = tmp_path / "prefix" / libdir / "libanvil_pjrt.so"
    installed.parent.mkdir(parents=True)
    installed.write_bytes(b"")
    assert anvil_jax.library_path() == str(installed)


def test_the_supported_jaxlib_is_the_installed_one():
    import jaxlib.version

    assert anvil_jax.version_mismatch(jaxlib.version.__version__) is None


def test_another_jaxlib_is_told_both_versions():
    message = anvil_jax.version_mismatch("0.11.0")
    assert "PJRT C API 0.112" in message and "jaxlib 0.10.2" in message and "jaxlib 0.11.0" in message


def test_plugin_reports_its_pjrt_version_to_jax():
    from jax._src import xla_bridge

    assert xla_bridge.backend_pjrt_c_api_version("anvil") == anvil_jax.PJRT_API_VERSION
