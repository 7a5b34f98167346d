"""One reader of the object-store benchmark (src/bin/remote.rs): polars, pyarrow or the quiver
package (`pyarrow.table(quiver.read(URL, columns=[COLUMN]))`, the package installed from
std-adapters/python) reading an Arrow IPC file from an S3 API at ENDPOINT, whole or one COLUMN
(empty: whole); prints the rows and its peak resident set in KiB on stdout (quiver also the
requests, round trips and bytes its `Reader.requests` counted).

    python3 remote.py polars|pyarrow|quiver ENDPOINT BUCKET KEY [COLUMN]

Or writes the large file of the model run with pyarrow: 1,000,000 rows of 10 int64, 10
float64, 8 short strings, 2 booleans and 2 timestamps, in batches of 16,384 rows.

    python3 remote.py write PATH
"""
import sys


def peak_kib():
    """The process's peak resident set (`VmHWM`), in KiB. Not `getrusage`'s `ru_maxrss`: Linux
    keeps that across `execve`, so a child of the bench, which holds the whole file in memory,
    started at the parent's resident set (the 297 MB file's readers all read at 288-383 MiB)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


if sys.argv[1] == "write":
    import random

    import pyarrow as pa
    import pyarrow.ipc as ipc

    rows, batch_rows = 1_000_000, 16_384
    rng = random.Random(7)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
    fields = (
        [pa.field(f"i{n}", pa.int64()) for n in range(10)]
        + [pa.field(f"f{n}", pa.float64()) for n in range(10)]
        + [pa.field(f"s{n}", pa.string()) for n in range(8)]
        + [pa.field(f"b{n}", pa.bool_()) for n in range(2)]
        + [pa.field(f"t{n}", pa.timestamp("us", tz="UTC")) for n in range(2)]
    )
    schema = pa.schema(fields)
    with ipc.new_file(sys.argv[2], schema) as writer:
        for start in range(0, rows, batch_rows):
            n = min(batch_rows, rows - start)
            columns = (
                [pa.array([rng.getrandbits(62) for _ in range(n)], pa.int64()) for _ in range(10)]
                + [pa.array([rng.random() * 1e6 for _ in range(n)], pa.float64()) for _ in range(10)]
                + [
                    pa.array([f"{words[rng.getrandbits(3)]}-{rng.getrandbits(16)}" for _ in range(n)])
                    for _ in range(8)
                ]
                + [pa.array([rng.random() < 0.5 for _ in range(n)]) for _ in range(2)]
                + [
                    pa.array(
                        [1_600_000_000_000_000 + rng.getrandbits(40) for _ in range(n)],
                        pa.timestamp("us", tz="UTC"),
                    )
                    for _ in range(2)
                ]
            )
            writer.write_batch(pa.record_batch(columns, schema=schema))
    sys.exit(0)

reader, endpoint, bucket, key = sys.argv[1:5]
column = sys.argv[5] if len(sys.argv) > 5 and sys.argv[5] else None

if reader == "polars":
    import polars as pl

    options = {
        "aws_endpoint_url": endpoint,
        "aws_access_key_id": "quiver",
        "aws_secret_access_key": "quiver",
        "aws_region": "us-east-1",
        "aws_allow_http": "true",
    }
    frame = pl.scan_ipc(f"s3://{bucket}/{key}", storage_options=options)
    if column:
        frame = frame.select(column)
    rows = frame.collect().height
elif reader == "quiver":
    import os

    import pyarrow as pa
    import quiver

    os.environ.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="quiver",
        AWS_SECRET_ACCESS_KEY="quiver",
        AWS_REGION="us-east-1",
        AWS_ALLOW_HTTP="true",
    )
    source = quiver.read(f"s3://{bucket}/{key}", columns=[column] if column else None)
    rows = pa.table(source).num_rows
    counted = source.requests
    print(rows, peak_kib(), counted["requests"], counted["round_trips"], counted["bytes"])
    sys.exit(0)
else:
    import pyarrow.fs as fs
    import pyarrow.ipc as ipc

    s3 = fs.S3FileSystem(
        access_key="quiver",
        secret_key="quiver",
        region="us-east-1",
        endpoint_override=endpoint,
        scheme="http",
    )
    with s3.open_input_file(f"{bucket}/{key}") as f:
        table = ipc.open_file(f).read_all()
    if column:
        table = table.select([column])
    rows = table.num_rows
print(f"{reader}: {rows} rows", file=sys.stderr)
print(rows, peak_kib())
