"""quiver.to_json against polars, pandas and DuckDB on the same 1M-row pyarrow table, in one
process; then each writer's peak memory over the table's, each in a fresh process.

    python bench/bench_json.py [--rows N] [--repeat R]

Columns: int64, float64, strings, nullable int32 (1 in 10 null), list of int64 (0-3 items).
Times are the best of R runs. polars writes NDJSON into memory twice: into a `BytesIO`
(`write_ndjson(sink)`, bytes as quiver returns them) and as `write_ndjson()` with no argument
(the document returned as a `str`: polars decodes its bytes into one), pandas
`to_json(orient="records", lines=True)` into a string, DuckDB `COPY … (FORMAT json)` into a
file under /dev/shm (memory). Memory: the process's peak resident set (VmHWM, reset once the
table is built) minus its resident set then.
"""

import argparse
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import pyarrow as pa


def table(rows):
    import numpy as np

    rng = np.random.default_rng(7)
    ints = rng.integers(-(10**12), 10**12, rows)
    floats = rng.random(rows) * 1000
    words = pa.array([f"name-{i % 9973}-{'x' * (i % 13)}" for i in range(rows)])
    nullable = pa.array(rng.integers(0, 10**6, rows).astype("int32"), mask=(np.arange(rows) % 10 == 0))
    lengths = np.arange(rows) % 4
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype("int32")
    values = pa.array(rng.integers(0, 10**9, int(offsets[-1])))
    lists = pa.ListArray.from_arrays(pa.array(offsets), values)
    return pa.table({"id": ints, "score": floats, "name": words, "count": nullable, "tags": lists})


def best(f, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - start)
    return min(times), out


def runners(t):
    import quiver

    out = {"quiver.to_json": lambda: quiver.to_json(t)}
    out["quiver.to_json threads=1"] = lambda: quiver.to_json(t, threads=1)
    out["quiver.iter_json"] = lambda: sum(len(c) for c in quiver.iter_json(t))

    def to_null():
        with open(os.devnull, "wb") as null:
            return quiver.write_json(t, null)

    out["quiver.write_json devnull"] = to_null
    try:
        import polars as pl

        frame = pl.from_arrow(t)

        def polars_ndjson():
            sink = io.BytesIO()
            frame.write_ndjson(sink)
            return sink.getvalue()

        out["polars write_ndjson"] = polars_ndjson
        # The call as the issue names it: no argument, the document returned as a `str`.
        out["polars write_ndjson() str"] = lambda: frame.write_ndjson()
    except ImportError:
        pass
    try:
        frame_pd = t.to_pandas()
        out["pandas to_json"] = lambda: frame_pd.to_json(orient="records", lines=True).encode()
    except ImportError:
        pass
    try:
        import duckdb

        con = duckdb.connect()
        con.register("t", t)
        path = os.path.join("/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir(), "quiver-bench.json")

        def duck():
            con.execute(f"COPY (SELECT * FROM t) TO '{path}' (FORMAT json)")
            size = os.path.getsize(path)
            os.unlink(path)
            return size

        out["duckdb COPY json"] = duck
    except ImportError:
        pass
    return out


def rss(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1]) * 1024
    return 0


def memory_child(name, rows):
    """In a fresh process: the peak over the table's resident memory of one writer."""
    t = table(rows)
    run = runners(t)[name]
    # Resets the peak (VmHWM) to the current resident set: building the table peaked higher.
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before = rss("VmRSS:")
    out = run()
    peak = rss("VmHWM:")
    size = out if isinstance(out, int) else len(out)
    print(json.dumps({"table": t.nbytes, "over": peak - before, "output": size}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--memory-child")
    args = parser.parse_args()
    if args.memory_child:
        return memory_child(args.memory_child, args.rows)
    import quiver

    t = table(args.rows)
    print(f"{args.rows} rows, table {t.nbytes / 2**20:.1f} MiB, {os.cpu_count()} cores")
    run = runners(t)
    results = {}
    for name, f in run.items():
        seconds, out = best(f, args.repeat if "pandas" not in name else 1)
        size = out if isinstance(out, int) else len(out)
        results[name] = seconds
        print(f"{name:28} {seconds * 1000:9.1f} ms  {size / 2**20:8.1f} MiB")
    if "polars write_ndjson" in results:
        ratio = results["quiver.to_json"] / results["polars write_ndjson"]
        print(f"quiver.to_json / polars write_ndjson (BytesIO) = {ratio:.2f}x")
    if "polars write_ndjson() str" in results:
        ratio = results["quiver.to_json"] / results["polars write_ndjson() str"]
        print(f"quiver.to_json / polars write_ndjson() (returns str) = {ratio:.2f}x")
    same = quiver.to_json(t) == quiver.to_json(pa.Table.from_batches(t.to_batches()))
    print(f"quiver output stable across batchings: {same}")
    print("peak memory over the table's resident size (fresh process each):")
    for name in run:
        child = subprocess.run(
            [sys.executable, __file__, "--rows", str(args.rows), "--memory-child", name],
            capture_output=True,
            text=True,
        )
        if child.returncode != 0:
            print(f"{name:28} failed: {child.stderr.strip()[-200:]}")
            continue
        m = json.loads(child.stdout)
        print(f"{name:28} {m['over'] / 2**20:8.1f} MiB over the table ({m['table'] / 2**20:.1f} MiB), output {m['output'] / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
