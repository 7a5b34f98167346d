"""quiver: Arrow data to JSON, and Arrow IPC files read by quiver's own readers.

Data in
    Any object with ``__arrow_c_stream__`` (a pyarrow ``Table`` or ``RecordBatchReader``, a
    polars or pandas ``DataFrame``, a DuckDB result, a nanoarrow stream) or
    ``__arrow_c_array__`` (one record batch: a struct array whose children are the columns),
    imported zero-copy through the Arrow PyCapsule interface and validated like IPC input; a
    quiver ``Reader`` (``columns``, ``batches`` and ``limit`` then pick among the Reader's own
    columns, batches and rows); or the path (``str`` or ``os.PathLike``) of an Arrow IPC file
    or stream. One array of another type (a pyarrow ``Array`` or ``ChunkedArray``, a polars
    ``Series``) is a column, not a table: a ``ValueError`` saying how to make it one
    (``pyarrow.table({"name": array})``, ``series.to_frame()``).

JSON out
    ``to_json(data, **options) -> bytes``, ``write_json(data, sink, **options) -> int`` and
    ``iter_json(data, chunk_size=1048576, **options)``. The options are the ``quiver json``
    command's: ``format`` ("ndjson" or "array"), ``columns`` (dotted paths), ``batches``,
    ``limit``, ``omit_nulls``, ``large_ints_as_strings``, ``non_finite_as_strings``,
    ``timestamps_as_epoch``, ``timestamps_utc``, ``decimals_as_strings``, ``binary``
    ("hex" or "base64"), ``extensions_as_storage`` and ``threads``. A bad value is a
    ``ValueError`` naming it. Null members are written as ``null`` unless ``omit_nulls``.
    ``to_json`` writes the document straight into the ``bytes`` object it returns.

Arrow out
    ``read(source, columns=None, batches=None, limit=None)`` returns a ``Reader`` with
    ``__arrow_c_stream__``: ``pyarrow.table(quiver.read("f.arrow", columns=["x"]))``.
"""

from quiver._quiver import (
    InvalidArrowError,
    JsonEncodeError,
    QuiverError,
    Reader,
    iter_json,
    read,
    to_json,
    write_json,
)

__all__ = [
    "InvalidArrowError",
    "JsonEncodeError",
    "QuiverError",
    "Reader",
    "iter_json",
    "read",
    "to_json",
    "write_json",
]
