"""Run one asv `track_`, `mem_` or `peakmem_` benchmark (one parameter combination) in this
fresh, lean process and print what it reports as one JSON line: {"value": x}, {"skipped":
why} or {"error": why}. A `timeraw_` benchmark is timed SAMPLES times, each in a fresh
interpreter of its own as asv times it: {"times": [seconds per sample], "number": runs per
sample}.

A script, not a module of the benchkit package: it imports nothing of benchkit, so the
process holds what asv's own benchmark process holds (the interpreter, asv_runner, the
suite) and a `peakmem_` figure (the peak resident memory of the process) means what asv's
means. The value is asv_runner's own `run()` of the benchmark, so a `mem_` figure is
pympler's asizeof of the returned object exactly as asv computes it.

    python asv_value.py BENCHMARK_DIR NAME[-INDEX] [SAMPLES]
"""
import json
import sys


def main(root: str, name: str, samples: int = 1) -> dict:
    """What the benchmark `name` of the suite at `root` reports, as the reply to print."""
    from asv_runner.discovery import get_benchmark_from_name
    bench = get_benchmark_from_name(root, name)
    cache = bench.do_setup_cache()
    if cache is not None:
        bench.set_cache(cache)
    if bench.do_setup():
        return {"skipped": f"{name}: skipped, as asv skips it (its setup raised "
                           "NotImplementedError, or its skip_params name this combination)"}
    try:
        if type(bench).__name__ == "TimerawBenchmark":
            # asv_runner's own timer: the returned code run in a fresh interpreter per sample
            timer = bench._get_timer(*bench._build_params())
            return {"times": [timer.timeit(bench.number) for _ in range(samples)],
                    "number": bench.number}
        value = bench.run(*bench._build_params())
    finally:
        bench.do_teardown()
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return {"error": f"{name} returned {type(value).__name__}, not a number"}
    return {"value": float(value)}


if __name__ == "__main__":
    try:
        reply = main(sys.argv[1], sys.argv[2], *map(int, sys.argv[3:4]))
    except BaseException as error:      # the benchmark's own failure, reported, not raised
        reply = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(reply), flush=True)
