"""polars reading every object of a prefix at ENDPOINT (`src/bin/remote.rs --many`):
`scan_ipc` over the glob s3://BUCKET/PREFIX*.arrow, collected.

    python remote_many.py ENDPOINT BUCKET PREFIX
"""
import sys

import polars as pl

endpoint, bucket, prefix = sys.argv[1:4]
options = {
    "aws_endpoint_url": endpoint,
    "aws_access_key_id": "quiver",
    "aws_secret_access_key": "quiver",
    "aws_region": "us-east-1",
    "aws_allow_http": "true",
}
rows = pl.scan_ipc(f"s3://{bucket}/{prefix}*.arrow", storage_options=options).collect().height
print(f"polars: {rows} rows", file=sys.stderr)
