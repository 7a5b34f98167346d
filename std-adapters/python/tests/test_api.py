"""The package's behaviour: producers (polars, sliced and chunked pyarrow data, counted and
hostile C Data producers), the three JSON functions and their options, read() round trips."""

import _thread
import io
import json
import os
import threading
import time

import polars as pl
import pyarrow as pa
import pyarrow.ipc
import pytest

import producers
import quiver


def rows(data, **options):
    return [json.loads(line) for line in quiver.to_json(data, **options).splitlines()]


TABLE = pa.table(
    {
        "i": pa.array([1, None, 3, 4], pa.int64()),
        "f": [0.5, 1.5, None, 3.0],
        "s": ["a", "b\n", None, "é"],
        "l": [[1], [], None, [2, 3]],
        "st": [{"x": 1, "y": "p"}, None, {"x": 3, "y": None}, {"x": 4, "y": "q"}],
    }
)
EXPECTED = [
    {"i": 1, "f": 0.5, "s": "a", "l": [1], "st": {"x": 1, "y": "p"}},
    {"f": 1.5, "s": "b\n", "l": []},
    {"i": 3, "st": {"x": 3}},
    {"i": 4, "f": 3.0, "s": "é", "l": [2, 3], "st": {"x": 4, "y": "q"}},
]


def without_nulls(row):
    """A row as the encoder's default writes it: no null members (before issue 30's change)
    or with them; compare both ways by dropping nulls."""
    if isinstance(row, dict):
        return {k: without_nulls(v) for k, v in row.items() if v is not None}
    if isinstance(row, list):
        return [without_nulls(v) for v in row]
    return row


def test_pyarrow_table():
    assert [without_nulls(r) for r in rows(TABLE)] == EXPECTED


def test_record_batch_and_reader():
    batch = TABLE.to_batches()[0]
    assert quiver.to_json(batch) == quiver.to_json(TABLE)
    reader = pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches())
    assert quiver.to_json(reader) == quiver.to_json(TABLE)


def test_sliced_and_chunked():
    whole = quiver.to_json(TABLE).splitlines(keepends=True)
    assert quiver.to_json(TABLE.slice(1, 2)) == b"".join(whole[1:3])
    assert quiver.to_json(TABLE.to_batches()[0].slice(2)) == b"".join(whole[2:])
    chunked = pa.concat_tables([TABLE.slice(0, 1), TABLE.slice(1, 2), TABLE.slice(3)])
    assert chunked.column(0).num_chunks == 3
    assert quiver.to_json(chunked) == quiver.to_json(TABLE)
    # A sliced struct array handed over as one array (its offset applies to its children).
    struct = pa.StructArray.from_arrays([TABLE["i"].combine_chunks(), TABLE["s"].combine_chunks()], ["i", "s"])
    assert [without_nulls(r) for r in rows(struct.slice(1, 3))] == [{"s": "b\n"}, {"i": 3}, {"i": 4, "s": "é"}]


def test_polars():
    frame = pl.DataFrame(
        {
            "a": [1, 2, None],
            "s": ["x", None, "zé"],
            "l": [[1, 2], None, []],
            "c": pl.Series(["u", "v", "u"], dtype=pl.Categorical),
        }
    )
    got = [without_nulls(r) for r in rows(frame)]
    assert got == [{"a": 1, "s": "x", "l": [1, 2], "c": "u"}, {"a": 2, "c": "v"}, {"s": "zé", "l": [], "c": "u"}]
    # polars' own NDJSON, for the plain columns.
    plain = frame.drop("c")
    theirs = [without_nulls(json.loads(line)) for line in plain.write_ndjson().splitlines()]
    assert [without_nulls(r) for r in rows(plain)] == theirs


def test_columns_option():
    assert rows(TABLE, columns=["s", "st.x"])[0] == {"s": "a", "st": {"x": 1}}
    with pytest.raises(ValueError, match="columns"):
        quiver.to_json(TABLE, columns=["nope"])
    with pytest.raises(ValueError, match="columns"):
        quiver.to_json(TABLE, columns="s")


def test_options():
    t = pa.table(
        {
            "big": pa.array([2**60], pa.int64()),
            "nan": [float("nan")],
            "ts": pa.array([0], pa.timestamp("s", "America/New_York")),
            "d": pa.array([1], pa.decimal128(5, 2)),
            "b": pa.array([b"\x01\xff"], pa.binary()),
            "n": pa.array([None], pa.int32()),
        }
    )
    default = rows(t)[0]
    assert default["big"] == 2**60 and default["b"] == "01ff"
    assert default["ts"] == "1969-12-31T19:00:00-05:00"
    assert rows(t, large_ints_as_strings=True)[0]["big"] == str(2**60)
    assert rows(t, non_finite_as_strings=True)[0]["nan"] == "NaN"
    assert rows(t, timestamps_as_epoch=True)[0]["ts"] == 0
    assert rows(t, timestamps_utc=True)[0]["ts"] == "1970-01-01T00:00:00Z"
    assert rows(t, decimals_as_strings=True)[0]["d"] == "1.00"
    assert rows(t, binary="base64")[0]["b"] == "Af8="
    assert rows(t)[0]["n"] is None
    assert "n" not in rows(t, omit_nulls=True)[0]
    assert json.loads(quiver.to_json(t, format="array")) == rows(t)
    assert quiver.to_json(t, threads=1) == quiver.to_json(t)


@pytest.mark.parametrize(
    "options, named",
    [
        ({"format": "xml"}, "format"),
        ({"binary": "octal"}, "binary"),
        ({"omit_nulls": "yes"}, "omit_nulls"),
        ({"extensions_as_storage": 1}, "extensions_as_storage"),
        ({"threads": 0}, "threads"),
        ({"limit": -1}, "limit"),
        ({"batches": "1..2"}, "batches"),
    ],
)
def test_a_bad_value_is_a_value_error_naming_it(options, named):
    with pytest.raises(ValueError, match=named):
        quiver.to_json(TABLE, **options)


def test_an_unknown_option_is_a_type_error():
    with pytest.raises(TypeError, match="nulls_please"):
        quiver.to_json(TABLE, nulls_please=True)
    with pytest.raises(TypeError, match="expected Arrow data"):
        quiver.to_json(42)


def test_batches_and_limit():
    batches = pa.Table.from_batches([TABLE.to_batches()[0].slice(i, 1) for i in range(4)])
    lines = quiver.to_json(TABLE).splitlines(keepends=True)
    assert quiver.to_json(batches, batches=range(1, 3)) == b"".join(lines[1:3])
    assert quiver.to_json(batches, batches=2) == lines[2]
    assert quiver.to_json(batches, batches=(3, None)) == lines[3]
    assert quiver.to_json(batches, limit=3) == b"".join(lines[:3])
    with pytest.raises(ValueError, match="past the last batch"):
        quiver.to_json(batches, batches=(9, None))


def test_released_exactly_once():
    stream = producers.CountedStream(pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches()))
    assert quiver.to_json(stream) == quiver.to_json(TABLE)
    assert stream.releases == 1
    batch = producers.CountedBatch(TABLE.to_batches()[0])
    assert quiver.to_json(batch) == quiver.to_json(TABLE)
    assert batch.releases == (1, 1)


def test_released_exactly_once_on_errors():
    # An error before any batch (an unknown column), after the stream was taken.
    stream = producers.CountedStream(pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches()))
    with pytest.raises(ValueError):
        quiver.to_json(stream, columns=["nope"])
    assert stream.releases == 1
    # An error in the middle of the stream (the producer's own).
    def failing():
        yield TABLE.to_batches()[0]
        raise RuntimeError("the producer failed")

    stream = producers.CountedStream(pa.RecordBatchReader.from_batches(TABLE.schema, failing()))
    with pytest.raises(quiver.InvalidArrowError, match="the producer failed"):
        quiver.to_json(stream)
    assert stream.releases == 1
    # An encoder error (a time zone no database knows) while batches are held.
    zoned = pa.table({"t": pa.array([0], pa.timestamp("s", "Mars/Olympus"))})
    batch = producers.CountedBatch(zoned.to_batches()[0])
    with pytest.raises(quiver.JsonEncodeError, match="Mars/Olympus|zone"):
        quiver.to_json(batch)
    assert batch.releases == (1, 1)


@pytest.mark.parametrize("make", [producers.hostile_list, producers.hostile_string, producers.hostile_dictionary])
def test_a_hostile_array_is_an_error_not_a_crash(make):
    hostile = make()
    with pytest.raises(quiver.InvalidArrowError, match="invalid array"):
        quiver.to_json(hostile)
    assert hostile.releases == (1, 1)


def test_iter_json_chunks():
    big = pa.table({"i": pa.array(range(100_000), pa.int64()), "s": [str(i) for i in range(100_000)]})
    whole = quiver.to_json(big)
    chunks = list(quiver.iter_json(big, chunk_size=64 * 1024))
    assert b"".join(chunks) == whole
    assert len(chunks) > 10
    # Each chunk but the last is at least the size asked for, and not much more.
    assert all(64 * 1024 <= len(c) < 3 * 64 * 1024 for c in chunks[:-1])
    # Chunks end on row boundaries (NDJSON lines).
    assert all(c.endswith(b"\n") for c in chunks)
    array = b"".join(quiver.iter_json(big, chunk_size=10_000, format="array"))
    assert array == quiver.to_json(big, format="array")
    assert list(quiver.iter_json(big.slice(0, 0))) == []


def test_write_json_to_a_path(tmp_path):
    out = tmp_path / "rows.ndjson"
    written = quiver.write_json(TABLE, out)
    assert out.read_bytes() == quiver.to_json(TABLE)
    assert written == out.stat().st_size
    quiver.write_json(TABLE, str(out), format="array")
    assert out.read_bytes() == quiver.to_json(TABLE, format="array")


def test_write_json_is_atomic(tmp_path):
    out = tmp_path / "rows.ndjson"
    out.write_bytes(b"old\n")
    os.chmod(out, 0o640)

    def failing():
        yield TABLE.to_batches()[0]
        raise RuntimeError("the producer failed")

    reader = pa.RecordBatchReader.from_batches(TABLE.schema, failing())
    with pytest.raises(quiver.QuiverError):
        quiver.write_json(reader, out)
    # The old file is untouched and no partial file is left beside it.
    assert out.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.ndjson"]
    quiver.write_json(TABLE, out)
    assert out.read_bytes() == quiver.to_json(TABLE)
    assert out.stat().st_mode & 0o777 == 0o640


def test_write_json_to_a_file_object():
    sink = io.BytesIO()
    written = quiver.write_json(TABLE, sink, format="array")
    assert sink.getvalue() == quiver.to_json(TABLE, format="array")
    assert written == len(sink.getvalue())

    class Broken(io.RawIOBase):
        def writable(self):
            return True

        def write(self, b):
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        quiver.write_json(TABLE, Broken())
    with pytest.raises(TypeError, match="sink"):
        quiver.write_json(TABLE, 3)


def test_ctrl_c_interrupts_a_long_run():
    # 100,000 batches of 100,000 rows (one batch's buffers, shared): minutes of output, in
    # bounded memory, unless interrupted. The signal lands in quiver's own checks or in the
    # sink's Python `write`: KeyboardInterrupt either way.
    batch = pa.record_batch({"i": pa.array(range(100_000), pa.int64())})
    table = pa.Table.from_batches([batch] * 100_000)

    class Sink:
        def write(self, data):
            return len(data)

    timer = threading.Timer(0.5, _thread.interrupt_main)
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            quiver.write_json(table, Sink(), threads=1)
    finally:
        timer.cancel()
    assert time.monotonic() - started < 30


def write_ipc(path, table, stream=False):
    open_writer = pa.ipc.new_stream if stream else pa.ipc.new_file
    with open_writer(path, table.schema) as writer:
        for batch in table.to_batches(max_chunksize=2):
            writer.write_batch(batch)


@pytest.mark.parametrize("stream", [False, True])
def test_read_round_trips(tmp_path, stream):
    path = tmp_path / "t.arrow"
    write_ipc(path, TABLE, stream)
    assert pa.table(quiver.read(path)).equals(TABLE.combine_chunks()) or pa.table(quiver.read(path)).to_pylist() == TABLE.to_pylist()
    # polars.from_arrow takes any C stream as one struct Series; DataFrame(...) takes the columns.
    assert pl.from_arrow(quiver.read(str(path))).struct.unnest().to_dicts() == pl.from_arrow(TABLE).to_dicts()
    assert pl.DataFrame(quiver.read(path)).to_dicts() == pl.from_arrow(TABLE).to_dicts()
    picked = pa.table(quiver.read(path, columns=["s", "st.y"], batches=(1, None), limit=1))
    assert picked.to_pylist() == [{"s": None, "st": {"y": None}}]
    # A path straight into the JSON functions, and a Reader.
    assert quiver.to_json(path) == quiver.to_json(TABLE)
    assert quiver.to_json(quiver.read(path, limit=2)) == b"".join(quiver.to_json(TABLE).splitlines(keepends=True)[:2])


def test_read_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        quiver.read(tmp_path / "missing.arrow")
    bad = tmp_path / "bad.arrow"
    bad.write_bytes(b"PAR1 not arrow at all PAR1")
    with pytest.raises(quiver.InvalidArrowError, match="Parquet"):
        quiver.read(bad)
    reader = quiver.read(write_ipc(tmp_path / "t.arrow", TABLE) or tmp_path / "t.arrow")
    pa.table(reader)
    with pytest.raises(ValueError, match="consumed"):
        pa.table(reader)


def test_read_exports_zero_copy(tmp_path):
    path = tmp_path / "t.arrow"
    write_ipc(path, pa.table({"i": pa.array(range(1000), pa.int64())}))
    table = pa.table(quiver.read(path))
    assert table.column("i").to_pylist() == list(range(1000))


def test_columns_apply_to_a_reader(tmp_path):
    # columns= picks among the Reader's own columns (struct children too), as it does for a
    # table; batches= and limit= count the Reader's batches and rows.
    path = tmp_path / "t.arrow"
    write_ipc(path, TABLE)
    expected = quiver.to_json(TABLE, columns=["s", "st.y"])
    assert quiver.to_json(quiver.read(path), columns=["s", "st.y"]) == expected
    assert quiver.to_json(quiver.read(TABLE), columns=["s", "st.y"]) == expected
    narrowed = quiver.read(path, columns=["i", "st"])
    assert quiver.to_json(narrowed, columns=["st.x"], limit=3) == quiver.to_json(TABLE, columns=["st.x"], limit=3)
    assert pa.table(quiver.read(quiver.read(path), columns=["l"])).equals(TABLE.select(["l"]).combine_chunks())
    chunks = list(quiver.iter_json(quiver.read(path), columns=["f"], chunk_size=1))
    assert b"".join(chunks) == quiver.to_json(TABLE, columns=["f"])
    # A column the Reader does not return is named, as for any source.
    with pytest.raises(ValueError, match="columns: .*s"):
        quiver.to_json(quiver.read(path, columns=["i"]), columns=["s"])


def test_one_plain_array_is_refused_with_what_to_do():
    # A record batch is a struct array (its children the columns); one array of another type
    # is a column with no name to write: refused, saying how to make it a table.
    for data in [pa.array([1, 2, 3]), pa.chunked_array([[1], [2, 3]]), pl.Series("x", [1, 2])]:
        with pytest.raises(ValueError, match=r"got one array of type int64: make it a column of a table"):
            quiver.to_json(data)
    with pytest.raises(ValueError, match=r'pyarrow.table\(\{"x": array\}\)'):
        quiver.to_json(pl.Series("x", [1, 2]))
    assert quiver.to_json(pl.Series("x", [1, 2]).to_frame()) == b'{"x":1}\n{"x":2}\n'
    assert quiver.to_json(pa.table({"x": pa.array([1, 2, 3])})) == b'{"x":1}\n{"x":2}\n{"x":3}\n'


@pytest.mark.parametrize("rows_", [0, 1, 1000, 300_000])
def test_to_json_is_the_streamed_document(tmp_path, rows_):
    # to_json writes into the bytes object it returns, sized from a sample of the rows: the
    # same bytes as the streaming writers, for sources whose rows it knows up front (a table,
    # its batches in a Reader) and for those it does not (a file), and for rows whose size the
    # sample cannot see (the last rows a hundred times longer: the object grows).
    longer = ["x" * (2000 if i >= rows_ * 0.95 else 10) for i in range(rows_)]
    table = pa.table({"i": pa.array(range(rows_), pa.int64()), "s": pa.array(longer, pa.string())})
    table = pa.Table.from_batches(table.to_batches(max_chunksize=70_000), table.schema)
    streamed = b"".join(quiver.iter_json(table))
    assert quiver.to_json(table) == streamed
    assert quiver.to_json(table, format="array") == b"".join(quiver.iter_json(table, format="array"))
    path = tmp_path / "t.arrow"
    with pa.ipc.new_file(path, table.schema) as writer:
        writer.write_table(table)
    assert quiver.to_json(path) == streamed
    assert quiver.to_json(quiver.read(table)) == streamed
    assert quiver.to_json(table, threads=1) == streamed
    assert quiver.to_json(table, omit_nulls=True, limit=rows_ // 2) == b"".join(quiver.iter_json(table, limit=rows_ // 2))
