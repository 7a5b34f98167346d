"""Every conformance file through pyarrow into `quiver.to_json`: byte-identical to `quiver json`
on the same IPC file (so both follow the same defaults), and through `quiver.read` back."""

import subprocess

import pyarrow as pa
import pyarrow.ipc
import pytest

import quiver
from conftest import integration_files

FILES = integration_files("arrow_file")


def cli_json(cli, path, *args):
    run = subprocess.run([str(cli), "json", *args, str(path)], capture_output=True)
    return run.returncode, run.stdout, run.stderr.decode()


def pyarrow_table(path):
    try:
        with pa.ipc.open_file(path) as reader:
            return reader.read_all()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
        pytest.skip(f"pyarrow cannot read {path.name}: {e}")


def test_the_files_are_there():
    assert len(FILES) > 50


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_pyarrow_table_to_json_is_the_cli_output(path, quiver_cli):
    code, expected, stderr = cli_json(quiver_cli, path)
    table = pyarrow_table(path)
    if code != 0:
        # What the command refuses (an encoder error), the library refuses too.
        with pytest.raises(quiver.QuiverError):
            quiver.to_json(table)
        return
    assert quiver.to_json(table) == expected
    assert quiver.to_json(table, format="array", threads=1) == cli_json(quiver_cli, path, "--format", "array", "--threads", "1")[1]


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_read_round_trips_through_pyarrow(path, quiver_cli):
    code, expected, _ = cli_json(quiver_cli, path)
    if code != 0:
        pytest.skip("the command refuses this file")
    table = pa.table(quiver.read(path))
    # pyarrow's copy, handed back to quiver, writes the same JSON.
    assert quiver.to_json(table) == expected
    # And the file read by pyarrow has the same values.
    try:
        with pa.ipc.open_file(path) as reader:
            theirs = reader.read_all()
    except pa.ArrowException:
        return
    if theirs.schema.equals(table.schema):
        assert table.equals(theirs)
