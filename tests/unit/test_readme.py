from pathlib import Path

from model.broker_keys import BROKER_CONFIGS

README = (Path(__file__).parents[2] / "README.md").read_text()


def test_readme_documents_every_broker_config_key():
    missing = [name for name in BROKER_CONFIGS if f"`{name}`" not in README]
    assert missing == []


def test_readme_has_the_two_setup_commands():
    assert "make up" in README and "make test" in README
