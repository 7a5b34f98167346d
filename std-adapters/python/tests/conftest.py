"""Shared fixtures: the conformance files and the `quiver` command built from this workspace."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def arrow_testing_data():
    """`$ARROW_TESTING_DATA`, else `../shared/arrow-testing/data` beside the project; None when
    absent, unless QUIVER_REQUIRE_ARROW_TESTING=1 (a failure then)."""
    path = pathlib.Path(os.environ.get("ARROW_TESTING_DATA", ROOT.parent / "shared/arrow-testing/data"))
    if path.is_dir():
        return path
    if os.environ.get("QUIVER_REQUIRE_ARROW_TESTING") == "1":
        raise AssertionError(f"arrow-testing data not found at {path} and QUIVER_REQUIRE_ARROW_TESTING=1")
    return None


def integration_files(extension):
    data = arrow_testing_data()
    if data is None:
        return []
    return sorted((data / "arrow-ipc-stream/integration").rglob(f"*.{extension}"))


@pytest.fixture(scope="session")
def quiver_cli():
    """The `quiver` command, built by cargo (debug, as `cargo test` builds it)."""
    subprocess.run(["cargo", "build", "--quiet", "-p", "quiver-cli"], cwd=ROOT, check=True)
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "debug" / "quiver"
