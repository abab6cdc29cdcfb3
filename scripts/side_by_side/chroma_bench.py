"""chromadb on the vectors `hindsight-bench bench vectors` wrote: the same load and queries as
`hindsight bench search`, timed the same way. Prints one JSON line.

Usage: chroma_bench.py VECTORS_DIR [--batch 500] [--top-k 10] [--recall-queries 50]

The collection holds every memory with its namespace (and memory type) as metadata, cosine
space. Each query asks the top k of its namespace, as hindsight's search asks one: with one
namespace in the data that is the whole collection (no filter); with several, a
`where={"namespace": ...}` filter. `--unfiltered` also times the queries over the whole
collection when there are several. Inserts go in batches of `--batch` (chromadb has no per-write dedup to run).
RSS is this process's (chromadb's embedded client runs its Rust core in-process), taken
before the recall check: the memories' vectors are read one batch at a time and never held
whole, so the figure is chromadb's and the interpreter's, not the harness's copy of the data.
"""

import argparse
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import chromadb
import numpy as np


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentile(sorted_values, p):
    if not sorted_values:
        return 0.0
    rank = round(p / 100 * (len(sorted_values) - 1))
    return sorted_values[min(rank, len(sorted_values) - 1)]


def load(directory: Path, name: str):
    """The rows' metadata and their vectors, mapped from the file (read when touched)."""
    meta = [line.rstrip("\n").split("\t") for line in open(directory / f"{name}.tsv")]
    path = directory / f"{name}.f32"
    floats = path.stat().st_size // 4
    dimension = floats // len(meta)
    if dimension * len(meta) != floats:
        raise SystemExit(f"{name}.f32 does not hold {len(meta)} rows")
    return np.memmap(path, dtype="<f4", mode="r", shape=(len(meta), dimension)), meta


def timed_queries(collection, queries, query_meta, top_k, filtered):
    latencies, results = [], []
    for vector, meta in zip(queries, query_meta):
        where = {"namespace": meta[0]} if filtered else None
        started = time.perf_counter()
        found = collection.query(
            query_embeddings=[vector.tolist()], n_results=top_k, where=where, include=[]
        )
        latencies.append((time.perf_counter() - started) * 1000)
        results.append(found["ids"][0])
    return sorted(latencies), results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("vectors", type=Path)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--recall-queries", type=int, default=50)
    parser.add_argument("--unfiltered", action="store_true")
    args = parser.parse_args()

    memories, memory_meta = load(args.vectors, "memories")
    queries, query_meta = load(args.vectors, "queries")
    dimension = memories.shape[1]
    ids = [str(i) for i in range(len(memories))]
    store = tempfile.mkdtemp(prefix="chroma-bench-")
    try:
        client = chromadb.PersistentClient(path=store)
        collection = client.create_collection(
            "bench", configuration={"hnsw": {"space": "cosine"}}
        )
        started = time.perf_counter()
        for start in range(0, len(memories), args.batch):
            end = min(start + args.batch, len(memories))
            # Read from the file, not through the map: the harness holds one batch at a time.
            batch = np.fromfile(
                memories.filename,
                dtype="<f4",
                offset=start * dimension * 4,
                count=(end - start) * dimension,
            ).reshape(end - start, dimension)
            collection.add(
                ids=ids[start:end],
                embeddings=batch,
                metadatas=[
                    {"namespace": m[0], "memory_type": m[1]} for m in memory_meta[start:end]
                ],
            )
        load_seconds = time.perf_counter() - started
        rss_after_load = rss_mb()

        filtered = len({m[0] for m in memory_meta}) > 1
        latencies, results = timed_queries(
            collection, queries, query_meta, args.top_k, filtered=filtered
        )
        report = {
            "system": "chromadb",
            "version": chromadb.__version__,
            "n": len(memories),
            "dimension": memories.shape[1],
            "batch": args.batch,
            "inserts_per_second": len(memories) / load_seconds,
            "queries": len(queries),
            "top_k": args.top_k,
            "filtered": filtered,
            "search_p50_ms": percentile(latencies, 50),
            "search_p95_ms": percentile(latencies, 95),
            "search_p99_ms": percentile(latencies, 99),
            "rss_after_load_mb": rss_after_load,
        }
        if args.unfiltered and filtered:
            unfiltered, _ = timed_queries(
                collection, queries, query_meta, args.top_k, filtered=False
            )
            report["unfiltered_p50_ms"] = percentile(unfiltered, 50)
            report["unfiltered_p99_ms"] = percentile(unfiltered, 99)
        report["rss_mb"] = rss_mb()
        report["peak_rss_mb"] = peak_rss_mb()

        # Recall@10 against exact cosine over the query's namespace (the vectors are unit).
        namespaces = np.array([m[0] for m in memory_meta])
        hits = wanted = 0
        for q in range(min(args.recall_queries, len(queries))):
            members = np.flatnonzero(namespaces == query_meta[q][0])
            scores = memories[members] @ queries[q]
            best = members[np.argsort(-scores)[: args.top_k]]
            hits += len({str(i) for i in best} & set(results[q]))
            wanted += len(best)
        report["recall_at_10"] = hits / max(wanted, 1)
        print(json.dumps(report))
    finally:
        shutil.rmtree(store, ignore_errors=True)


if __name__ == "__main__":
    main()
