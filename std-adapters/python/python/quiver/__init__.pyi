"""Type stubs for quiver (the quiver-arrow distribution)."""

import os
from typing import Any, Iterator, Literal, Optional, Protocol, Sequence, Tuple, Union

class ArrowStreamExportable(Protocol):
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

class ArrowArrayExportable(Protocol):
    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> Tuple[object, object]: ...

class BinaryFile(Protocol):
    def write(self, data: bytes) -> Optional[int]: ...

#: Arrow data: a PyCapsule producer (pyarrow, polars, pandas, DuckDB, nanoarrow…) of record
#: batches (one array must be a struct array: its children are the columns), a Reader (the
#: options then select among its own columns, batches and rows), or the path of an Arrow IPC
#: file or stream.
Data = Union[ArrowStreamExportable, ArrowArrayExportable, "Reader", str, "os.PathLike[str]"]

#: Record batches: one (`3`), a range (`range(2, 5)`) or `(start, stop)` with `None` for an open end.
Batches = Union[int, range, Tuple[Optional[int], Optional[int]]]

class QuiverError(Exception):
    """Base class of quiver's errors."""

class InvalidArrowError(QuiverError):
    """Arrow data that breaks a rule of the format (from a file, or from another library)."""

class JsonEncodeError(QuiverError):
    """A value the JSON encoder refuses (an unknown time zone, a map with a null key, …)."""

class Reader:
    """Record batches read by quiver, consumed once through `__arrow_c_stream__` or `to_json`."""

    @property
    def column_names(self) -> list[str]: ...
    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...

def read(
    source: Data,
    *,
    columns: Optional[Sequence[str]] = None,
    batches: Optional[Batches] = None,
    limit: Optional[int] = None,
) -> Reader:
    """Opens an Arrow IPC file or stream (or takes any Arrow data) with a selection; the result
    exports an Arrow C stream (`pyarrow.table(quiver.read(path))`)."""

def to_json(
    data: Data,
    *,
    format: Literal["ndjson", "array"] = "ndjson",
    columns: Optional[Sequence[str]] = None,
    batches: Optional[Batches] = None,
    limit: Optional[int] = None,
    omit_nulls: bool = False,
    extensions_as_storage: bool = False,
    large_ints_as_strings: bool = False,
    non_finite_as_strings: bool = False,
    timestamps_as_epoch: bool = False,
    timestamps_utc: bool = False,
    decimals_as_strings: bool = False,
    binary: Literal["hex", "base64"] = "hex",
    threads: Optional[int] = None,
) -> bytes:
    """The rows of `data` as JSON (NDJSON, or one array)."""

def write_json(
    data: Data,
    sink: Union[str, "os.PathLike[str]", BinaryFile],
    *,
    format: Literal["ndjson", "array"] = "ndjson",
    columns: Optional[Sequence[str]] = None,
    batches: Optional[Batches] = None,
    limit: Optional[int] = None,
    omit_nulls: bool = False,
    extensions_as_storage: bool = False,
    large_ints_as_strings: bool = False,
    non_finite_as_strings: bool = False,
    timestamps_as_epoch: bool = False,
    timestamps_utc: bool = False,
    decimals_as_strings: bool = False,
    binary: Literal["hex", "base64"] = "hex",
    threads: Optional[int] = None,
) -> int:
    """Writes the JSON of `data` to a path (atomically) or a binary file object; returns the
    bytes written."""

def iter_json(
    data: Data,
    chunk_size: int = 1048576,
    *,
    format: Literal["ndjson", "array"] = "ndjson",
    columns: Optional[Sequence[str]] = None,
    batches: Optional[Batches] = None,
    limit: Optional[int] = None,
    omit_nulls: bool = False,
    extensions_as_storage: bool = False,
    large_ints_as_strings: bool = False,
    non_finite_as_strings: bool = False,
    timestamps_as_epoch: bool = False,
    timestamps_utc: bool = False,
    decimals_as_strings: bool = False,
    binary: Literal["hex", "base64"] = "hex",
    threads: Optional[int] = None,
) -> Iterator[bytes]:
    """The JSON of `data` in chunks of about `chunk_size` bytes, as they are produced."""
