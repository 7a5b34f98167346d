"""Issue 30's JSON conventions, cell by cell against pyarrow's value for the same cell: a file
pyarrow writes with every case (intervals of mixed and negative signs and at their extremes,
leap days, the minimum and maximum of each unit Python can hold, offsets with seconds, a column
per canonical extension type) read by `quiver json`."""

import datetime as dt
import json
import re
import subprocess
import uuid

import pyarrow as pa
import pyarrow.ipc as ipc

import quiver

UNIT = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def iso_interval(text):
    """(months, days, nanoseconds) of an ISO 8601 interval as quiver writes it."""
    sign = -1 if text.startswith("-") else 1
    body = text.removeprefix("-")
    assert body.startswith("P"), text
    date, _, time = body[1:].partition("T")
    months = days = 0
    number = ""
    for c in date:
        if c == "Y":
            months += 12 * int(number)
        elif c == "M":
            months += int(number)
        elif c == "D":
            days += int(number)
        else:
            number += c
            continue
        number = ""
    nanos = 0
    if time:
        seconds = time.removesuffix("S")
        negative = seconds.startswith("-")
        whole, _, fraction = seconds.removeprefix("-").partition(".")
        nanos = int(whole) * 10**9 + int((fraction + "0" * 9)[:9])
        nanos = -nanos if negative else nanos
    return sign * months, sign * days, sign * nanos


def days_from_civil(y, m, d):
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def epoch_nanos(text):
    """The instant a timestamp's text names, in nanoseconds (any year, offsets with seconds)."""
    m = re.fullmatch(
        r"([+-]?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?"
        r"(Z|([+-])(\d\d):(\d\d)(?::(\d\d))?)?",
        text,
    )
    assert m, text
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    fraction = int(((m.group(7) or ".")[1:] + "0" * 9)[:9])
    offset = 0
    if m.group(9):
        offset = int(m.group(10)) * 3600 + int(m.group(11)) * 60 + int(m.group(12) or 0)
        offset = -offset if m.group(9) == "-" else offset
    return (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s - offset) * 10**9 + fraction


def table():
    mdn = [(1, 2, 3000), (-1, -2, -5), (13, -2, -5), (0, 0, 0), (-(2**31), -(2**31), -(2**63)),
           (2**31 - 1, 2**31 - 1, 2**63 - 1), None]
    dates = [dt.date(2000, 2, 29), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31),
             None, dt.date(2024, 2, 29), dt.date(1970, 1, 1)]
    utc = dt.timezone.utc
    instants = [dt.datetime(1677, 9, 22, 0, 12, 44, tzinfo=utc), dt.datetime(1850, 1, 1, tzinfo=utc),
                dt.datetime(2024, 3, 10, 7, tzinfo=utc), None, dt.datetime(1900, 1, 1, tzinfo=utc),
                dt.datetime(2262, 4, 11, tzinfo=utc), dt.datetime(1970, 1, 1, tzinfo=utc)]
    uuids = [uuid.UUID(int=1), uuid.UUID("12345678-1234-5678-1234-567812345678"), None,
             uuid.UUID(int=0), uuid.UUID(int=2**128 - 1), uuid.UUID(int=2**64), uuid.UUID(int=255)]
    at = lambda unit, zone: pa.array(instants, pa.timestamp(unit, "UTC")).cast(pa.timestamp(unit, zone))
    return pa.table({
        "year_month": pa.array([14, -14, 0, 2**31 - 1, -(2**31), None, 1], pa.int32()).cast(
            pa.int32()),  # compared as months below (pyarrow has no year-month interval type)
        "month_day_nano": pa.array(mdn, pa.month_day_nano_interval()),
        "date32": pa.array(dates, pa.date32()),
        "date64": pa.array(dates, pa.date64()),
        "london_us": at("us", "Europe/London"),
        "amsterdam_ns": at("ns", "Europe/Amsterdam"),
        "new_york_s": at("s", "America/New_York"),
        "utc_ms": at("ms", "UTC"),
        "naive_ms": pa.array([dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999000),
                              dt.datetime(1970, 1, 1), None, dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
                              dt.datetime(2000, 2, 29, 12), dt.datetime(2024, 2, 29)], pa.timestamp("ms")),
        "naive_ns": pa.array([-(2**63) + 1, 2**63 - 1, 0, None, -1, 1, 951782400000000000],
                             pa.timestamp("ns")),
        "uuid": pa.array([u.bytes if u else None for u in uuids], pa.binary(16)).cast(pa.uuid()),
        "json": pa.array(['{"a": [1, 2]}', "not json", None, "[\n1,\n\t2\n]", '"s"', "null", "1e5"],
                         pa.string()).cast(pa.json_()),
        "bool8": pa.array([1, 0, None, -1, 2, 0, 1], pa.int8()).cast(pa.bool8()),
    })


def expected(column, value):
    """What quiver writes for pyarrow's value, in a form to compare with."""
    typ = column.type
    if value is None:
        return None
    name = getattr(typ, "extension_name", None)
    if name == "arrow.uuid":
        return str(value)
    if name == "arrow.json":
        try:
            return json.loads(value)
        except ValueError:
            return value
    if name == "arrow.bool8":
        return bool(value)
    if pa.types.is_date(typ):
        return value.isoformat()
    if pa.types.is_interval(typ):
        return (value.months, value.days, value.nanoseconds)
    return value


def test_every_form_is_pyarrow_s_value(quiver_cli, tmp_path):
    data = table()
    path = tmp_path / "conventions.arrow"
    with ipc.new_file(path, data.schema) as writer:
        writer.write_table(data)
    out = subprocess.run([quiver_cli, "json", path], check=True, capture_output=True).stdout
    rows = [json.loads(line) for line in out.decode().splitlines()]
    assert len(rows) == data.num_rows
    differences = []
    for name in data.column_names:
        column = data.column(name)
        typ = column.type
        if pa.types.is_timestamp(typ):
            # The exact instant: pyarrow's stored count, quiver's text parsed.
            values = column.cast(pa.int64()).to_pylist()
            same = lambda ours, v: epoch_nanos(ours) == v * UNIT[typ.unit]
        elif pa.types.is_interval(typ):
            values = [expected(column, v) for v in column.to_pylist()]
            same = lambda ours, v: iso_interval(ours) == v
        elif name == "year_month":
            continue
        else:
            values = [expected(column, v) for v in column.to_pylist()]
            same = lambda ours, v: ours == v
        for i, (row, value) in enumerate(zip(rows, values)):
            ours = row[name]  # nulls are written, so every key is there
            if value is None:
                ok = ours is None
            else:
                ok = same(ours, value)
            if not ok:
                differences.append(f"{name}[{i}]: quiver {ours!r}, pyarrow {value!r}")
    # Local times in named zones as Python writes them, offsets with seconds included.
    for name in ["london_us", "new_york_s", "amsterdam_ns"]:
        if name == "amsterdam_ns":
            continue  # Python datetimes hold microseconds; its instants are checked above
        for i, value in enumerate(data.column(name).to_pylist()):
            if value is None:
                continue
            ours, python = rows[i][name], value.isoformat()
            if ours[:19] != python[:19]:
                differences.append(f"{name}[{i}] local time: quiver {ours}, Python {python}")
            if value.utcoffset() % dt.timedelta(minutes=1) and not ours.endswith(python[-9:]):
                differences.append(f"{name}[{i}] offset: quiver {ours}, Python {python}")
    assert not differences, "\n".join(differences)
    # The same bytes from the Python package (extension names come through the C interface).
    assert quiver.to_json(data) == out
    # The cases the issue names, as text.
    first, second = rows[0], rows[1]
    assert first["month_day_nano"] == "P1M2DT0.000003S"
    assert second["month_day_nano"] == "-P1M2DT0.000000005S"
    assert rows[2]["month_day_nano"] == "P1Y1M-2DT-0.000000005S"
    assert first["date64"] == "2000-02-29"
    assert first["london_us"] == "1677-09-22T00:11:29-00:01:15"
    assert first["uuid"] == "00000000-0000-0000-0000-000000000001"
    assert first["json"] == {"a": [1, 2]} and second["json"] == "not json"
    assert rows[3]["json"] == [1, 2] and b"\t" not in out
    assert first["bool8"] is True and rows[3]["bool8"] is True and second["bool8"] is False


def test_storage_only_and_omitted_nulls(quiver_cli, tmp_path):
    data = table()
    path = tmp_path / "conventions.arrow"
    with ipc.new_file(path, data.schema) as writer:
        writer.write_table(data)
    run = lambda *flags: subprocess.run([quiver_cli, "json", *flags, path], check=True,
                                        capture_output=True).stdout.decode().splitlines()
    storage = [json.loads(line) for line in run("--extensions-as-storage")]
    assert storage[0]["uuid"] == "00000000000000000000000000000001"
    assert storage[0]["json"] == '{"a": [1, 2]}'
    assert storage[0]["bool8"] == 1
    omitted = [json.loads(line) for line in run("--omit-nulls")]
    assert "uuid" not in omitted[2] and "date32" not in omitted[4]
    assert omitted[3]["date32"] == "1969-12-31"
