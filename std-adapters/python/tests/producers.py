"""Arrow PyCapsule producers for the tests, built with ctypes over pyarrow's C Data Interface
export: their release callbacks are counted, and their arrays can be made hostile."""

import ctypes

import pyarrow as pa


class ArrowSchema(ctypes.Structure):
    _fields_ = [
        ("format", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("metadata", ctypes.c_char_p),
        ("flags", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class ArrowArray(ctypes.Structure):
    _fields_ = [
        ("length", ctypes.c_int64),
        ("null_count", ctypes.c_int64),
        ("offset", ctypes.c_int64),
        ("n_buffers", ctypes.c_int64),
        ("n_children", ctypes.c_int64),
        ("buffers", ctypes.c_void_p),
        ("children", ctypes.c_void_p),
        ("dictionary", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


class ArrowArrayStream(ctypes.Structure):
    _fields_ = [
        ("get_schema", ctypes.c_void_p),
        ("get_next", ctypes.c_void_p),
        ("get_last_error", ctypes.c_void_p),
        ("release", ctypes.c_void_p),
        ("private_data", ctypes.c_void_p),
    ]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_NAMES = {
    ArrowSchema: b"arrow_schema",
    ArrowArray: b"arrow_array",
    ArrowArrayStream: b"arrow_array_stream",
}


class Counted:
    """A structure exported by pyarrow whose release callback counts its calls, then calls
    pyarrow's own. The structure stays alive as long as this object."""

    def __init__(self, kind, export):
        self.kind = kind
        self.struct = kind()
        export(ctypes.addressof(self.struct))
        self.releases = 0
        callback_type = ctypes.CFUNCTYPE(None, ctypes.POINTER(kind))
        original = callback_type(self.struct.release)

        def release(pointer):
            self.releases += 1
            pointer.contents.release = ctypes.cast(original, ctypes.c_void_p).value
            original(pointer)

        self._original = original
        self._release = callback_type(release)
        self.struct.release = ctypes.cast(self._release, ctypes.c_void_p).value

    def capsule(self):
        """A capsule over the structure (no destructor: the consumer must take it)."""
        return _new_capsule(ctypes.addressof(self.struct), _NAMES[self.kind], None)

    def release_if_left(self):
        """Releases the structure if no consumer took it (so the tests leak nothing)."""
        if self.struct.release:
            callback_type = ctypes.CFUNCTYPE(None, ctypes.POINTER(self.kind))
            callback_type(self.struct.release)(ctypes.pointer(self.struct))


class CountedStream:
    """`__arrow_c_stream__` over a pyarrow RecordBatchReader, its release counted."""

    def __init__(self, reader):
        self.stream = Counted(ArrowArrayStream, reader._export_to_c)

    @property
    def releases(self):
        return self.stream.releases

    def __arrow_c_stream__(self, requested_schema=None):
        return self.stream.capsule()


class CountedBatch:
    """`__arrow_c_array__` over a pyarrow RecordBatch (or StructArray), its releases counted."""

    def __init__(self, batch):
        holder = {}

        def export_array(address):
            holder["array"] = address

        def export_schema(address):
            holder["schema"] = address

        # pyarrow exports both at once: export into two fresh structures, then count both.
        self.array = ArrowArray()
        self.schema_struct = ArrowSchema()
        batch._export_to_c(ctypes.addressof(self.array), ctypes.addressof(self.schema_struct))
        self.array_counted = _wrap(ArrowArray, self.array)
        self.schema_counted = _wrap(ArrowSchema, self.schema_struct)

    @property
    def releases(self):
        return (self.array_counted.releases, self.schema_counted.releases)

    def __arrow_c_array__(self, requested_schema=None):
        return (self.schema_counted.capsule(), self.array_counted.capsule())


def _wrap(kind, struct):
    def export(address):
        ctypes.memmove(address, ctypes.addressof(struct), ctypes.sizeof(kind))
        struct.release = None

    return Counted(kind, export)


def patched(batch, column, buffer, values):
    """A `CountedBatch` of `batch` whose `column`'s buffer number `buffer` (in the C layout:
    0 is the validity) is replaced by the int32 `values`: a producer that lies."""
    counted = CountedBatch(batch)
    children = ctypes.cast(counted.array_counted.struct.children, ctypes.POINTER(ctypes.POINTER(ArrowArray)))
    child = children[column].contents
    buffers = ctypes.cast(child.buffers, ctypes.POINTER(ctypes.c_void_p))
    counted.patch = (ctypes.c_int32 * len(values))(*values)
    buffers[buffer] = ctypes.addressof(counted.patch)
    return counted


def hostile_list():
    """A list column whose last offset points past its child (3 values)."""
    batch = pa.RecordBatch.from_arrays([pa.array([[1, 2], [3]], pa.list_(pa.int64()))], ["x"])
    return patched(batch, 0, 1, [0, 2, 100])


def hostile_string():
    """A string column whose offsets go backwards."""
    batch = pa.RecordBatch.from_arrays([pa.array(["abc", ""], pa.string())], ["s"])
    return patched(batch, 0, 1, [0, 3, 1])


def hostile_dictionary():
    """A dictionary column whose index points past its dictionary (2 values)."""
    batch = pa.RecordBatch.from_arrays([pa.array(["a", "b"]).dictionary_encode()], ["d"])
    return patched(batch, 0, 1, [0, 7])
