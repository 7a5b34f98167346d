"""One reader of the object-store benchmark (src/bin/remote.rs): polars or pyarrow reading an
Arrow IPC file from an S3 API at ENDPOINT, whole or one COLUMN (empty: whole).

    python3 remote.py polars|pyarrow ENDPOINT BUCKET KEY [COLUMN]
"""
import sys

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
