"""Objects named by URL, read by quiver's object-store reader: `file://` always, S3 through a
`moto_server` on loopback (skipped without one, unless QUIVER_REQUIRE_MOTO=1). The requests
a selection costs are the `quiver json` command's."""

import os
import re
import shutil
import socket
import subprocess
import time
import http.client

import pyarrow as pa
import pyarrow.ipc
import pytest

import quiver

TABLE = pa.table({"x": pa.array(range(30_000), pa.int64()), "s": [f"v{i}" for i in range(30_000)]})


def write_file(path):
    with pa.ipc.new_file(path, TABLE.schema) as writer:
        for batch in TABLE.to_batches(max_chunksize=3_000):
            writer.write_batch(batch)
    return path


def same_requests(ours, cli):
    """The same requests and bytes as the CLI. Round trips (requests sent one after another)
    depend on when each answer arrives, on loopback within a few either way: not compared.
    Nor, to the byte, are the bytes of a scan: the GET of the file's start sent beside the
    opening one is cut where the opening's 64 KiB tail starts, once the tail has come, and on
    loopback it may have brought some of those bytes by then."""
    assert ours["requests"] == cli["requests"]
    assert abs(ours["bytes"] - cli["bytes"]) <= 64 * 1024, (ours, cli)
    assert 1 <= ours["round_trips"] <= ours["requests"]


def cli_stats(cli, url, *args, env=None):
    run = subprocess.run([str(cli), "json", "--stats", *args, url], capture_output=True, env=env, check=True)
    stats = dict(re.findall(r"(\w+)=(\d+)", run.stderr.decode()))
    return {"requests": int(stats["reads"]), "round_trips": int(stats["round_trips"]), "bytes": int(stats["bytes_read"])}, run.stdout


def test_file_url_one_column_costs_what_the_cli_does(tmp_path, quiver_cli):
    url = "file://" + str(write_file(tmp_path / "t.arrow"))
    reader = quiver.read(url, columns=["x"])
    table = pa.table(reader)
    assert table.column_names == ["x"] and table.column("x").to_pylist() == list(range(30_000))
    expected, _ = cli_stats(quiver_cli, url, "--columns", "x")
    same_requests(reader.requests, expected)
    # Every column of every batch: one GET of the whole object.
    reader = quiver.read(url)
    assert pa.table(reader).equals(TABLE.combine_chunks())
    assert reader.requests["requests"] == 1
    assert quiver.to_json(url) == quiver.to_json(TABLE)


def test_file_url_selection(tmp_path):
    url = "file://" + str(write_file(tmp_path / "t.arrow"))
    picked = pa.table(quiver.read(url, batches=range(2, 4), limit=4_000))
    assert picked.column("x").to_pylist() == list(range(6_000, 10_000))
    stream = tmp_path / "t.stream"
    with pa.ipc.new_stream(stream, TABLE.schema) as writer:
        for batch in TABLE.to_batches(max_chunksize=3_000):
            writer.write_batch(batch)
    picked = pa.table(quiver.read("file://" + str(stream), columns=["s"], batches=(9, None)))
    assert picked.column("s").to_pylist() == [f"v{i}" for i in range(27_000, 30_000)]
    with pytest.raises(ValueError, match="past the last batch"):
        quiver.to_json("file://" + str(stream), batches=(12, None))


def test_stream_url_costs_what_the_cli_does(tmp_path, monkeypatch, quiver_cli):
    """A stream's every batch (some columns) is read in parallel parts after its start, its
    first rows as they are read: the same requests as `quiver json`, whichever the reading."""
    big = pa.table({"x": pa.array(range(300_000), pa.int64()), "s": [f"v{i}" for i in range(300_000)]})
    stream = tmp_path / "big.stream"
    with pa.ipc.new_stream(stream, big.schema) as writer:
        for batch in big.to_batches(max_chunksize=10_000):
            writer.write_batch(batch)
    url = "file://" + str(stream)
    # A 1 ms first byte: the start read at opening is 1 MiB, the stream's 5 MB are more. The
    # bandwidth given too, so that the parts are the same however fast loopback was.
    monkeypatch.setenv("QUIVER_FIRST_BYTE_MS", "1")
    monkeypatch.setenv("QUIVER_REQUEST_MIBPS", "64")
    for selection, args in [({"columns": ["s"]}, ["--columns", "s"]), ({"limit": 5}, ["--limit", "5"])]:
        reader = quiver.read(url, **selection)
        table = pa.table(reader)
        expected = big.select(["s"]) if "columns" in selection else big.slice(0, 5)
        assert table.equals(expected.combine_chunks())
        cli, _ = cli_stats(quiver_cli, url, *args, env=dict(os.environ))
        if "columns" in selection:
            same_requests(reader.requests, cli)
            assert cli["requests"] > 3 and cli["bytes"] >= stream.stat().st_size, cli
        else:
            # The start, the end and the GET of what lies between, stopped early (the reading
            # thread may have read a batch more than the CLI by then: bytes not compared).
            assert reader.requests["requests"] == cli["requests"] == 3, (reader.requests, cli)
            assert cli["bytes"] < 2 * 1024 * 1024, cli


def test_url_reads_the_network_settings_of_the_cli(tmp_path, monkeypatch):
    url = "file://" + str(write_file(tmp_path / "t.arrow"))
    monkeypatch.setenv("QUIVER_WINDOW_MIB", "fast")
    with pytest.raises(ValueError, match="QUIVER_WINDOW_MIB=fast: expected a positive whole number"):
        pa.table(quiver.read(url, columns=["x"]))
    monkeypatch.setenv("QUIVER_WINDOW_MIB", "1")
    monkeypatch.setenv("QUIVER_STALL_TIMEOUT", "0.5")
    assert pa.table(quiver.read(url, columns=["x"])).column("x").to_pylist() == list(range(30_000))


def test_url_errors(tmp_path):
    with pytest.raises(OSError, match="no such object"):
        quiver.read("file://" + str(tmp_path / "missing.arrow"))
    with pytest.raises(ValueError, match="schemes"):
        quiver.read("ftp://host/t.arrow")


def put(endpoint, path, body):
    """One plain PUT (a bucket, an object) to moto_server, which must answer 200."""
    host, port = endpoint.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("PUT", path, body, {"Content-Type": "application/octet-stream"})
        answer = connection.getresponse()
        answer.read()
        assert answer.status == 200, f"PUT {path}: {answer.status}"
    finally:
        connection.close()


@pytest.fixture
def moto():
    if shutil.which("moto_server") is None:
        if os.environ.get("QUIVER_REQUIRE_MOTO") == "1":
            raise AssertionError("moto_server not found and QUIVER_REQUIRE_MOTO=1")
        pytest.skip("moto_server not found")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        started = time.monotonic()
        while True:
            try:
                put(endpoint, "/quiver", b"")
                break
            except OSError:
                assert time.monotonic() - started < 60, "moto_server did not answer"
                time.sleep(0.1)
        env = {
            "AWS_ACCESS_KEY_ID": "quiver",
            "AWS_SECRET_ACCESS_KEY": "quiver",
            "AWS_REGION": "us-east-1",
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ALLOW_HTTP": "true",
        }
        saved = {k: os.environ.get(k) for k in env}
        os.environ.update(env)
        yield endpoint
    finally:
        for k, v in locals().get("saved", {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.kill()
        server.wait()


def test_s3_one_column_costs_what_the_cli_does(tmp_path, moto, quiver_cli):
    body = write_file(tmp_path / "t.arrow").read_bytes()
    put(moto, "/quiver/t.arrow", body)
    url = "s3://quiver/t.arrow"
    reader = quiver.read(url, columns=["x"])
    table = pa.table(reader)
    assert table.column("x").to_pylist() == list(range(30_000))
    expected, _ = cli_stats(quiver_cli, url, "--columns", "x", env=dict(os.environ))
    same_requests(reader.requests, expected)
    assert quiver.to_json(url) == quiver.to_json(TABLE)


def test_polars_written_files_are_read_whole_by_url(tmp_path, moto):
    # polars writes its schema message without the length prefix (file readers take the
    # footer's schema): such a file cannot be read front to back, so a read of every column
    # reads it by ranges, as `quiver json` does: from the whole read's bytes held in memory,
    # one GET of every byte (not the GET, then the footer and the blocks). It used to fail:
    # "malformed flatbuffer reading Message (byte offset 12)".
    import polars as pl

    frame = pl.DataFrame({"x": list(range(30_000)), "s": [f"v{i}" for i in range(30_000)]})
    path = tmp_path / "p.arrow"
    frame.write_ipc(path)
    put(moto, "/quiver/p.arrow", path.read_bytes())
    expected = quiver.to_json(frame.to_arrow())
    for url in ["file://" + str(path), "s3://quiver/p.arrow"]:
        reader = quiver.read(url)
        table = pa.table(reader)
        assert reader.requests["requests"] == 1, (url, reader.requests)
        assert reader.requests["bytes"] == path.stat().st_size, (url, reader.requests)
        assert table.column("x").to_pylist() == list(range(30_000)), url
        assert table.column("s").to_pylist() == [f"v{i}" for i in range(30_000)], url
        assert quiver.to_json(url) == expected, url
