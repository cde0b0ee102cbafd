"""The forking collector under real valgrind: counts independent of batch, order, jobs and
sessions; warm sessions; clean shutdown; dask.distributed workers."""
import os
import signal
import subprocess
import sys
import sysconfig
import textwrap
import time
from pathlib import Path

import pytest

import benchkit
from benchkit import Timer
from conftest import requires_valgrind
from test_cli import cli

# end to end: `make test` runs it, `make test-fast` leaves it out
pytestmark = [requires_valgrind, pytest.mark.slow]

SNIPPETS = [("sum(range(200))", "pass"), ("sorted(data)", "data = list(range(50, 0, -1))"),
            ("d['a'] + d['b']", "d = {'a': 1, 'b': 2}"), ("[i * 2 for i in range(30)]", "pass"),
            ("'-'.join(words)", "words = ['x'] * 20")]


def _counts(stats):
    return [s.counts() for s in stats]


def test_counts_do_not_depend_on_batch_order_or_jobs():
    timers = [Timer(stmt, setup) for stmt, setup in SNIPPETS]
    alone = [t.collect_callgrind(number=20).counts() for t in timers[:2]]
    batch = benchkit.collect_callgrind_many(timers, number=20, jobs=1)
    parallel = benchkit.collect_callgrind_many(list(reversed(timers)), number=20, jobs=2)
    assert _counts(batch)[:2] == alone
    assert _counts(batch) == list(reversed(_counts(parallel)))
    assert len(set(_counts(batch))) == len(SNIPPETS)


def test_random_inputs_drawn_in_setup_are_the_same_in_every_collection():
    # Data-dependent branches: unseeded, every collection would draw other data.
    timer = Timer("sum(1 for v in data if v > 0.5)",
                  "import random\ndata = [random.random() for _ in range(300)]")
    first, second = (timer.collect_callgrind(number=5) for _ in range(2))
    assert first.counts() == second.counts()
    assert "random_seeds" in first.metadata["controls"]


MUL = ("x * y", "x = torch.ones(128); y = torch.ones(128)")


@pytest.fixture(scope="module")
def mul_alone():
    return Timer(*MUL).collect_callgrind(number=50).counts()


@pytest.mark.parametrize("jobs", [pytest.param(1, marks=pytest.mark.compat), 2])
def test_a_torch_snippet_counts_the_same_alone_and_at_any_position(mul_alone, jobs):
    # One module group: with jobs=2 the server runs two children at once. A server that
    # allocated anything between forks (its bookkeeping, its replies) once made the second
    # fork count ~0.2% differently from the first in some checkouts.
    mul = Timer(*MUL)
    batch = benchkit.collect_callgrind_many(
        [Timer("x + y", "x = torch.ones(64); y = torch.ones(64)"), mul,
         Timer("x.sum()", "x = torch.ones(32)"), mul], number=50, jobs=jobs)
    assert batch[1].counts() == batch[3].counts() == mul_alone
    assert batch[1].metadata["controls"]["forked_from"]


def test_a_child_killed_by_a_signal_is_reported():
    # The C fork loop reaps the child and reports how it ended: as os.waitstatus_to_exitcode.
    with pytest.raises(benchkit.BenchkitError, match="killed by signal 9"):
        benchkit.collect_callgrind_many(
            [Timer("pass"), Timer("os.kill(os.getpid(), 9)", "import os")], number=1, jobs=1)
    assert Timer("pass").collect_callgrind(number=1).counts() > 0


def test_warm_session_reuses_its_collector_and_counts_the_same():
    timer = Timer("sum(range(200))")
    fresh = timer.collect_callgrind(number=20).counts()
    with benchkit.callgrind_session() as session:
        collector = session.collector
        first = session.collect(timer, number=20).counts()
        servers = {id(s) for s in collector._servers.values()}
        second = timer.collect_callgrind(number=20).counts()   # uses the active session
        assert {id(s) for s in collector._servers.values()} == servers
        processes = [s.process for s in collector._servers.values()]
        workdir = collector.workdir
    assert first == second == fresh
    assert all(p.poll() is not None for p in processes) and not workdir.exists()


def test_session_shuts_down_on_an_error_in_the_block():
    with pytest.raises(ZeroDivisionError):
        with benchkit.callgrind_session() as session:
            Timer("pass").collect_callgrind(number=1)
            collector = session.collector
            processes = [s.process for s in collector._servers.values()]
            1 / 0
    assert processes and all(p.poll() is not None for p in processes)


def test_a_snippet_error_in_a_forked_child_is_reported_and_others_are_unaffected():
    with pytest.raises(benchkit.BenchkitError, match="ZeroDivisionError"):
        benchkit.collect_callgrind_many([Timer("1 / 0"), Timer("pass")], number=1)


def test_a_sessions_jobs_is_the_default_of_collections_in_it():
    from benchkit.orchestration import counting
    assert counting.default_jobs() == (os.cpu_count() or 1)
    with benchkit.callgrind_session(jobs=3) as session:
        assert session.jobs == counting.default_jobs() == 3
        assert counting.build_options("collect_callgrind").jobs == 3
        assert counting.build_options("collect_callgrind", jobs=1).jobs == 1
        # layouts of one snippet spread over the session's jobs; counts as everywhere
        stats = Timer("sum(range(50))").collect_callgrind(number=5, layouts=2)
    assert len(stats.metadata["layouts"]["per_run"]) == 2


@requires_valgrind
def test_a_session_with_two_jobs_and_two_layouts_keeps_its_servers_between_collections():
    """The layout servers of a session outlive the pool threads of the collection that
    started them (they died with those threads), and an editable install's own hooks are
    left out of their interpreter's view whatever the distribution is called."""
    with benchkit.callgrind_session(jobs=2) as session:
        first = Timer("sum(range(100))").collect_callgrind(number=10, layouts=2)
        second = Timer("sorted(range(100))").collect_callgrind(number=10, layouts=2)
        again = Timer("sum(range(100))").collect_callgrind(number=10, layouts=2)
        assert session.jobs == 2
    assert first.counts() > 0 and second.counts() > 0
    assert again.counts() == first.counts()
    from benchkit.system.machine import OWN_INSTALL_HOOKS
    for hook in ("__editable__.benchkit_perf-0.1.0.pth", "__editable__.benchkit-0.1.pth",
                 "__editable___benchkit_perf_0_1_0_finder.py"):
        assert OWN_INSTALL_HOOKS.fullmatch(hook), hook


def test_collectors_take_their_options_as_one_object():
    import inspect
    from benchkit.engines.callgrind.collector import Collector
    assert list(inspect.signature(Collector.collect).parameters) == ["self", "requests",
                                                                      "options", "on_request"]


def test_progress_counts_collections():
    class Progress:
        total, n = 0, 0

        def update(self, k):
            self.n += k
    progress = Progress()
    benchkit.collect_callgrind_many([Timer(s, u) for s, u in SNIPPETS[:3]], number=5,
                                    progress=progress)
    assert progress.n == 3


def test_collector_and_its_children_die_with_a_killed_parent(tmp_path):
    script = textwrap.dedent('''
        import benchkit
        with benchkit.callgrind_session() as s:
            s.collect(benchkit.Timer("pass"), number=1)
            print("warm", flush=True)
            benchkit.Timer("while True: pass").collect_callgrind(number=1)
    ''')
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                              text=True)
    assert parent.stdout.readline().strip() == "warm"
    time.sleep(3)
    mine = _descendants(parent.pid)
    assert mine, "no collector processes found"
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    for _ in range(150):
        alive = [p for p in mine if Path(f"/proc/{p}").exists() and _state(p) != "Z"]
        if not alive:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"collector processes outlived their parent: {alive}")


def _descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = (task / "children").read_text().split()
            except OSError:
                kids = []
            out += [int(k) for k in kids]
            todo += [int(k) for k in kids]
    return out


def _state(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local:
        with distributed.Client(local) as client:
            yield client


def test_dask_workers_count_the_same_as_local_collection(cluster):
    timers = [Timer(stmt, setup) for stmt, setup in SNIPPETS]
    local = benchkit.collect_callgrind_many(timers, number=20)
    remote = benchkit.collect_callgrind_many(timers, number=20, executor=cluster)
    assert _counts(remote) == _counts(local)
    assert all(s.metadata.get("host") for s in remote)
    assert remote[0].metadata["worker_environment"]["python"]


def test_a_function_a_suite_defines_is_counted_on_dask_workers(cluster, tmp_path):
    from benchkit.orchestration.suite import select
    path = tmp_path / "bench_f.py"
    path.write_text("from benchkit import Timer\n\ndef work(n):\n    return sum(range(n))\n\n"
                    "bench_w = Timer('work(50)', globals={'work': work})\n")
    (benchmark,) = select([path])
    timer = Timer.from_task(benchmark.task)
    local = benchkit.collect_callgrind_many([timer], number=5)
    remote = benchkit.collect_callgrind_many([timer], number=5, executor=cluster)
    assert _counts(remote) == _counts(local) and local[0].per_run() > 0
    # The same from the command line, at the scheduler's address.
    address = cluster.scheduler_info()["address"]
    out = cli("run", path, "--callgrind", "--no-wall-time", "--scheduler", address,
              "-o", "remote.json", cwd=tmp_path, check_code=0)
    assert f"instruction counts on the workers of {address}" in out.stderr
    (counted,) = benchkit.load(tmp_path / "remote.json").callgrind
    assert counted.metadata.get("host") and counted.per_run() > 0


def test_any_executor_works_and_a_bad_one_is_refused():
    import concurrent.futures
    timers = [Timer(stmt, setup) for stmt, setup in SNIPPETS[:2]]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        via_pool = benchkit.collect_callgrind_many(timers, number=20, executor=pool)
    assert _counts(via_pool) == _counts(benchkit.collect_callgrind_many(timers, number=20))
    with pytest.raises(benchkit.BenchkitError, match="has no submit"):
        benchkit.collect_callgrind_many(timers, number=20, executor=object())


def test_cli_jobs_and_an_unreachable_scheduler(tmp_path):
    (tmp_path / "bench_c.py").write_text(
        "from benchkit import Timer\n"
        + "".join(f"bench_{i} = Timer({s!r}, {u!r})\n" for i, (s, u) in enumerate(SNIPPETS)))
    cli("run", "bench_c.py", "--callgrind", "--no-wall-time", "-j", "2", "-o", "a.json",
        cwd=tmp_path, check_code=0)
    cli("run", "bench_c.py", "--callgrind", "--no-wall-time", "-j", "1", "-o", "b.json",
        cwd=tmp_path, check_code=0)
    a, b = benchkit.load(tmp_path / "a.json"), benchkit.load(tmp_path / "b.json")
    assert _counts(a.callgrind) == _counts(b.callgrind)
    # Counts-only files get an instruction verdict per benchmark without a gate, and a gate
    # on it decides the exit code.
    out = cli("compare", "a.json", "b.json", "--fail-on", "instructions>0%", cwd=tmp_path,
              check_code=0).stdout
    assert f"instructions (beyond both layout bands): 0 more, 0 fewer, {len(SNIPPETS)} same" in out
    assert "faster" not in out and "geometric mean of time" not in out
    (tmp_path / "bench_c.py").write_text((tmp_path / "bench_c.py").read_text().replace(
        "range(200)", "range(300)"))
    cli("run", "bench_c.py", "--callgrind", "--no-wall-time", "-o", "c.json", "-k", "bench_0",
        cwd=tmp_path, check_code=0)
    out = cli("compare", "a.json", "c.json", "--allow-missing", cwd=tmp_path, check_code=0).stdout
    assert "instructions (beyond both layout bands): 1 more, 0 fewer, 0 same" in out
    out = cli("compare", "a.json", "c.json", "--fail-on", "instructions>0%", "--allow-missing",
              cwd=tmp_path, check_code=1).stdout
    assert "REGRESSION: 1 benchmark(s) broke a gate: bench_c::bench_0" in out
    out = cli("run", "bench_c.py", "--callgrind", "--scheduler", "tcp://127.0.0.1:9",
              cwd=tmp_path, check_code=2)
    assert "cannot connect" in out.stderr and "Connection refused" in out.stderr
    assert not (tmp_path / "results").exists()     # refused before any work
    out = cli("run", "bench_c.py", "--callgrind", "--scheduler", "127.0.0.1:9",
              cwd=tmp_path, check_code=2)      # no scheme: tcp, as for dask
    assert "Connection refused" in out.stderr
    out = cli("run", "bench_c.py", "-j", "2", cwd=tmp_path, check_code=2)
    assert "add --callgrind" in out.stderr
    assert os.listdir(tmp_path)


TOUR_CG = """
from benchkit import Timer
timer = Timer("x * y", '''
        x = torch.ones((128,))
        y = torch.ones((128,))
    ''')
print(timer.collect_callgrind(number=100).counts())
"""
CHECKOUT_CHECK = """
import benchkit
print(benchkit.__file__)
"""


def _bare_venv(venv: Path) -> str:
    """A virtualenv of this one's interpreter at `venv`, with no lib yet: its python."""
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text((Path(sys.prefix) / "pyvenv.cfg").read_text())
    (venv / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    return str(venv / "bin" / "python")


@pytest.mark.compat
@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="needs a virtualenv to mirror")
def test_counts_do_not_depend_on_where_the_virtualenv_lives(tmp_path):
    # The same packages through virtualenvs at paths of other lengths. Before the collector
    # ran a mirror of the venv, this checkout's venv counted 978,094 and others 976,594.
    pythons = [sys.executable]
    for name in ("a-virtualenv-at-a-much-longer-path",):
        pythons.append(_bare_venv(tmp_path / name))
        (tmp_path / name / "lib").symlink_to(Path(sys.prefix) / "lib")
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"),
           "PYTHONPATH": str(Path(benchkit.__file__).resolve().parent.parent)}
    counts = [subprocess.run([python, "-c", TOUR_CG], capture_output=True, text=True, env=env,
                             check=True, cwd=tmp_path).stdout.split()[-1] for python in pythons]
    assert len(set(counts)) == 1, counts


def _editable_finder() -> Path | None:
    site = Path(sysconfig.get_paths()["purelib"])
    return next(site.glob("__editable___benchkit_*_finder.py"), None)


@pytest.mark.compat
@pytest.mark.skipif(sys.prefix == sys.base_prefix or _editable_finder() is None,
                    reason="needs benchkit installed editable in a virtualenv")
def test_counts_do_not_depend_on_where_an_editable_checkout_lives(tmp_path):
    # An editable install's finder holds the checkout's path. With it in the collector, a
    # finder pointing 4 characters further counted the tour's x * y 976,594 instead of 978,094.
    site = Path(sysconfig.get_paths()["purelib"])
    finder = _editable_finder()
    package = Path(benchkit.__file__).resolve().parent
    counts = []
    for n, checkout in enumerate(("c", "a-checkout-at-a-much-longer-path-than-the-other")):
        (tmp_path / checkout).mkdir()
        (tmp_path / checkout / "benchkit").symlink_to(package)
        venv = tmp_path / f"venv{n}"   # venvs at paths of the same length
        python = _bare_venv(venv)
        own_site = venv / site.relative_to(sys.prefix)
        own_site.mkdir(parents=True)
        for entry in site.iterdir():
            if entry != finder and entry.name != "__pycache__":
                (own_site / entry.name).symlink_to(entry)
        (own_site / finder.name).write_text(
            finder.read_text().replace(repr(str(package)), repr(str(tmp_path / checkout /
                                                                      "benchkit"))))
        env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
        done = subprocess.run([python, "-c", TOUR_CG + CHECKOUT_CHECK],
                              capture_output=True, text=True, env=env, cwd=tmp_path)
        assert done.returncode == 0, done.stderr[-2000:]
        count, where = done.stdout.split()[-2:]
        assert where == str(tmp_path / checkout / "benchkit" / "__init__.py")
        counts.append(count)
    assert counts[0] == counts[1]



TO_DOUBLE_CG_TIMES = """
import sys
import benchkit
timer = benchkit.Timer("x.to(torch.float64)", "x = torch.ones((128,))")
for _ in range(int(sys.argv[1])):   # collectors one after the other
    print(benchkit.collect_callgrind_many([timer], number=100)[0].counts())
"""


@pytest.mark.compat
def test_counts_do_not_depend_on_the_bytecode_caches_of_benchkit(tmp_path):
    # A copy of benchkit without caches, counted twice; then with caches compiled under
    # another path, as pip writes them, counted again. Before the collector compiled benchkit
    # from source without listing its folders, the first count was 1,751,573 and the others
    # 1,749,673: its own first run wrote caches through its link, every later one (through
    # another link) had their file names rewritten on load, allocations the counts showed.
    # Empty __pycache__ folders, in turn, changed the listing the path finder keeps.
    import shutil
    copy = tmp_path / "copy"
    package = copy / "benchkit"
    shutil.copytree(Path(benchkit.__file__).resolve().parent, package,
                    ignore=shutil.ignore_patterns("__pycache__", ".*"))
    (copy / "script.py").write_text(TO_DOUBLE_CG_TIMES)
    # the calling process writes no caches, like a user's with PYTHONDONTWRITEBYTECODE
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/"),
           "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1"}

    def count(times: int) -> list[str]:
        done = subprocess.run([sys.executable, "script.py", str(times)], capture_output=True,
                              text=True, env=env, cwd=copy)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()[-times:]

    counts = count(2)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-f", "-d",
                    "/site-packages/of/another/install/benchkit", str(package)],
                   check=True, env=env)
    counts += count(1)
    assert len(set(counts)) == 1, counts
