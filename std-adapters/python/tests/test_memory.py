"""Zero-copy: converting a table holds no second copy of its buffers. Each case runs in a
fresh process that resets its peak resident set (Linux `clear_refs`) once the table is built,
then reports how far above that the conversion went."""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")

CHILD = r"""
import json, os, sys
import pyarrow as pa
import quiver

rows = 4_000_000
table = pa.table({"a": pa.array(range(rows), pa.int64()), "b": pa.array(range(rows), pa.float64())})
table = pa.Table.from_batches(table.to_batches(max_chunksize=500_000))

def rss(field):
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith(field))

with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")
before = rss("VmRSS:")
case = sys.argv[1]
if case == "write_json":
    with open(os.devnull, "wb") as null:
        out = quiver.write_json(table, null)
elif case == "iter_json":
    out = sum(len(c) for c in quiver.iter_json(table))
else:
    out = len(quiver.to_json(table))
print(json.dumps({"table": table.nbytes, "over": rss("VmHWM:") - before, "output": out}))
"""

MiB = 1 << 20


def measure(case):
    run = subprocess.run([sys.executable, "-c", CHILD, case], capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


@pytest.mark.parametrize("case", ["write_json", "iter_json"])
def test_streaming_holds_no_copy_of_the_table(case):
    m = measure(case)
    assert m["table"] == 64_000_000 and m["output"] > m["table"]
    # A copy of the table would be 61 MiB; the writer's chunk buffers are a few MiB.
    assert m["over"] < 24 * MiB, m


def test_to_json_holds_its_output_once():
    m = measure("to_json")
    assert m["over"] < m["output"] + 24 * MiB, m


READ_CHILD = r"""
import json, os, sys
import pyarrow as pa
import quiver

rows, path = 1_000_000, sys.argv[1]
table = pa.table({f"c{k}": pa.array(range(k, rows + k), pa.int64()) for k in range(8)})
with pa.ipc.new_file(path, table.schema) as writer:
    writer.write_table(table, max_chunksize=65_536)
del table

def rss():
    # Anonymous memory only: the library's code pages, read from its file as they are first
    # run, are not buffers held.
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) * 1024 for l in status if l.startswith("RssAnon:"))

before = rss()
one = pa.table(quiver.read(sys.argv[2] + path, columns=["c3"]))
assert one.column("c3").to_pylist()[:2] == [3, 4]
# Memory freed but kept by the allocator (glibc keeps up to tens of MB in its arenas after the
# read's threads freed the bodies) is not held by anything: returned before measuring.
try:
    import ctypes
    ctypes.CDLL("libc.so.6").malloc_trim(0)
except (OSError, AttributeError):
    pass
print(json.dumps({"column": one.nbytes, "held": rss() - before}))
"""


@pytest.mark.parametrize("scheme", ["", "file://"])
def test_one_column_read_holds_only_that_column(tmp_path, scheme):
    # A Reader of some columns hands pyarrow copies of their buffers: the slices of the bodies
    # it read would keep every batch's other seven columns alive (64 MB held for 8 MB).
    path = str(tmp_path / "eight.arrow")
    run = subprocess.run([sys.executable, "-c", READ_CHILD, path, scheme], capture_output=True, text=True, check=True)
    m = json.loads(run.stdout)
    assert m["column"] == 8_000_000
    assert m["held"] < 8_000_000 + 16 * MiB, m
