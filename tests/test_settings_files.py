"""A settings file the owner meant is never skipped in silence: a config or env file that is a broken symlink (a
dotfile manager's) or a directory in a file's place is one clear error, as a named config file that is missing."""

from __future__ import annotations

import pytest

from twin.exceptions import SettingsError
from twin.settings import load_settings


@pytest.fixture
def dirs(tmp_path, monkeypatch):
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))
    for name in ("TWIN_CONFIG", "TWIN_ENV_FILE", "TWIN_DATA_DIR"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "xdg_config_home" / "twin").mkdir(parents=True)
    return tmp_path


def test_absent_default_files_are_fine(dirs):
    assert load_settings().being


def test_a_named_env_file_may_not_exist_yet(dirs, monkeypatch):
    """twin writes the env file itself (`twin telegram pair`, `twin connect`), so a named one may be absent."""
    monkeypatch.setenv("TWIN_ENV_FILE", str(dirs / "secrets.env"))
    assert load_settings().being


@pytest.mark.parametrize("name, variable", [("twin.toml", "TWIN_CONFIG"), ("env", "TWIN_ENV_FILE")])
def test_a_broken_symlink_or_a_directory_in_a_files_place_is_an_error(dirs, name, variable):
    place = dirs / "xdg_config_home" / "twin" / name
    place.symlink_to(dirs / "dotfiles" / name)  # the target is gone
    with pytest.raises(SettingsError, match=rf"{variable}: .* is a symlink to nothing"):
        load_settings()
    place.unlink()
    place.symlink_to(place)  # a loop
    with pytest.raises(SettingsError, match="symlink to nothing"):
        load_settings()
    place.unlink()
    place.mkdir()
    with pytest.raises(SettingsError, match=rf"{variable}: .* is a directory"):
        load_settings()


def test_the_config_dir_setting_moves_the_toml_and_env_files_too(dirs, monkeypatch):
    """`TWIN_CONFIG_DIR` is where a second twin keeps its config: its `twin.toml` and env file are read there, not
    from `~/.config/twin` (found by a breaker run: only the API token moved)."""
    config = dirs / "second-twin"
    config.mkdir(mode=0o700)
    (config / "twin.toml").write_text('log_level = "DEBUG"\n')
    (config / "env").write_text("TWIN_BEING=second\n")
    for path in (config / "twin.toml", config / "env"):
        path.chmod(0o600)
    (dirs / "xdg_config_home" / "twin" / "twin.toml").write_text('log_level = "ERROR"\n')
    monkeypatch.delenv("TWIN_LOG_LEVEL", raising=False)
    monkeypatch.delenv("TWIN_BEING", raising=False)
    monkeypatch.setenv("TWIN_CONFIG_DIR", str(config))
    settings = load_settings()
    assert settings.log_level == "DEBUG" and settings.being == "second"
    assert settings.api_token_path.parent == config


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_number_that_is_not_finite_is_said_so_not_as_a_range(dirs, monkeypatch, value):
    monkeypatch.setenv("TWIN_EMBED_REST_S", value)
    with pytest.raises(SettingsError, match=r"TWIN_EMBED_REST_S: Input should be a finite number"):
        load_settings()
