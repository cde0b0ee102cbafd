import gzip
import json
import os
import pickle
from pathlib import Path

import pytest

import benchkit
from benchkit.errors import ResultsFileError
from benchkit.core.records import environment
from benchkit.system import machine
from benchkit.core.records import schema
from conftest import make_measurement

M1 = make_measurement([1.0, 1.1, 1.2, 1.3], label="mul", sub_label="a", description="d",
                      metadata={"k": [1, 2]})
M2 = make_measurement([2.0, 2.1], env="B", num_threads=4)


@pytest.mark.parametrize("name", ["r.json", "r.json.gz"])
def test_round_trip_keeps_everything(tmp_path, name):
    path = benchkit.save(tmp_path / name, [M1, M2])
    loaded = benchkit.load(path)
    assert loaded.measurements == [M1, M2]
    assert loaded.measurements[0].metadata == {"k": [1, 2]}
    env = loaded.environment
    for key in ("python", "benchkit", "torch", "numpy", "cpu_model", "cpu_count", "os",
                "hostname", "git", "timestamp", "threads"):
        assert key in env
    assert env["torch"] == "2.13.0+cpu" or env["torch"].startswith("2.")
    assert os.listdir(tmp_path) == [name]  # no temp file left behind


def test_gz_file_is_gzip_and_json_is_text(tmp_path):
    benchkit.save(tmp_path / "r.json.gz", [M1])
    assert (tmp_path / "r.json.gz").read_bytes()[:2] == b"\x1f\x8b"
    doc = json.loads(benchkit.save(tmp_path / "r.json", [M1]).read_text())
    assert doc["format"] == "benchkit-results" and doc["version"] == schema.FORMAT_VERSION


def test_git_commit_is_recorded_inside_a_checkout(tmp_path):
    import subprocess
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "f").write_text("x")
    subprocess.run(["git", "-C", str(tmp_path), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-qm", "x"], check=True)
    state = machine.git_state(str(tmp_path))
    assert len(state["commit"]) == 40 and state["dirty"] is False
    (tmp_path / "f").write_text("y")
    assert machine.git_state(str(tmp_path))["dirty"] is True
    assert machine.git_state("/") is None


def test_parse_cpu_model_from_proc_text():
    x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n"
    arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nModel\t\t: Raspberry Pi 4\n"
    assert environment.parse_cpu_model(x86) == "Intel(R) Xeon(R) CPU @ 2.20GHz"
    assert environment.parse_cpu_model(arm) == "Raspberry Pi 4"
    assert environment.parse_cpu_model("") is None


def test_environment_differences():
    base = {"cpu_model": "A", "torch": "2.13.0", "python": "3.11"}
    assert environment.differences(base, dict(base)) == []
    assert environment.differences(base, {**base, "torch": "2.12.0"}) == ["torch: 2.13.0 vs 2.12.0"]


def test_failed_save_keeps_the_old_file(tmp_path):
    path = benchkit.save(tmp_path / "r.json", [M1])
    before = path.read_bytes()
    bad = make_measurement([1.0], metadata={"obj": object()})
    with pytest.raises(ResultsFileError,
                       match=r"metadata.obj holds <object .*> \(object\), which a results file"):
        benchkit.save(path, [bad])
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["r.json"]


def _expect_error(path, *fragments):
    with pytest.raises(ResultsFileError) as info:
        benchkit.load(path)
    message = str(info.value)
    assert message.startswith(str(path))
    for fragment in fragments:
        assert fragment in message
    return info.value


def test_truncated_json(tmp_path):
    path = benchkit.save(tmp_path / "r.json", [M1, M2])
    path.write_bytes(path.read_bytes()[:200])
    _expect_error(path, "is not valid JSON (line", "truncated or corrupt")


def test_truncated_gzip(tmp_path):
    path = benchkit.save(tmp_path / "r.json.gz", [M1, M2])
    path.write_bytes(path.read_bytes()[:40])
    _expect_error(path, "truncated or corrupt gzip")


def test_file_of_another_kind(tmp_path):
    path = tmp_path / "package.json"
    path.write_text('{"name": "left-pad"}')
    _expect_error(path, "not a benchkit results file")
    path.write_bytes(b"\x00\x01\xffbinary")
    _expect_error(path, "not a text JSON file")


def test_pickle_file_is_refused_without_running_it(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.mkdir, (str(tmp_path / "executed"),))
    path = tmp_path / "r.json"
    path.write_bytes(pickle.dumps(Boom()))
    _expect_error(path)
    assert not (tmp_path / "executed").exists()


def test_newer_format_version(tmp_path):
    path = benchkit.save(tmp_path / "r.json", [M1])
    doc = json.loads(path.read_text())
    doc["version"] = schema.FORMAT_VERSION + 1
    path.write_text(json.dumps(doc))
    _expect_error(path, f"format version {schema.FORMAT_VERSION + 1}", "upgrade benchkit")


def test_missing_file_and_bad_fields(tmp_path):
    _expect_error(tmp_path / "nope.json", "no such file")
    path = benchkit.save(tmp_path / "r.json", [M1])
    doc = json.loads(path.read_text())
    doc["measurements"][0]["raw_times"] = ["fast"]
    path.write_text(json.dumps(doc))
    _expect_error(path, "measurements[0].raw_times")


def test_version_1_files_are_migrated(tmp_path):
    doc = {"format": "benchkit-results", "version": 1, "environment": {"python": "3.11.7"},
           "measurements": [schema.measurement_to_dict(M1)]}
    path = tmp_path / "old.json.gz"
    path.write_bytes(gzip.compress(json.dumps(doc).encode()))
    loaded = benchkit.load(path)
    assert loaded.measurements == [M1] and loaded.callgrind == []


def test_merge_results_from_two_machines(tmp_path):
    a = benchkit.load(benchkit.save(tmp_path / "a.json", [M1], environment={"hostname": "a"}))
    b = benchkit.load(benchkit.save(tmp_path / "b.json", [M2], environment={"hostname": "b"}))
    merged = benchkit.merge([a, b])
    assert merged.measurements == [M1, M2]
    assert merged.environment == {"merged": [{"hostname": "a"}, {"hostname": "b"}],
                                  "merged_items": [[1, 0, 0], [1, 0, 0]]}


def _sampled():
    from benchkit.core.measure.measurement import ProcessSample
    m = make_measurement([1.0, 1.1, 1.2, 1.3, 1.4], label="mul")
    m.processes = [ProcessSample((2, 1), (3.4e-4, 3.5e-4)), ProcessSample((2,), (5.8e-4,))]
    return m


AB_SECTION = {"design": "interleaved", "rounds": 2, "trials": 20, "trial_time": 0.025,
              "seed": None,
              "sides": {"base": {"python": "/usr/bin/python3", "env": {}, "rev": "main",
                                 "environment": {"python": "3.11.7"}},
                        "new": {"python": "/usr/bin/python3", "env": {"WORK": "400"},
                                "rev": None, "environment": {}}},
              "only_base": ["bench_a::gone"], "only_new": []}


def test_process_structure_and_ab_section_round_trip(tmp_path):
    from benchkit.core.records.records import AbRecord, Side
    from benchkit.core.records.schema import Results
    m = _sampled()
    ab = AbRecord.from_dict(AB_SECTION)
    assert ab.sides[Side.NEW].env == {"WORK": "400"} and ab.only_base == ("bench_a::gone",)
    path = benchkit.save(tmp_path / "r.json", Results([m], [], {"python": "x"}, {}, ab))
    loaded = benchkit.load(path)
    assert loaded.measurements == [m] and loaded.ab == ab
    assert loaded.measurements[0].chunk_times()[0] == [m.times[:2], m.times[2:3]]
    doc = json.loads(path.read_text())
    assert doc["version"] == schema.FORMAT_VERSION and doc["ab"] == AB_SECTION
    assert doc["measurements"][0]["processes"][1] == {"chunks": [2], "probes": [5.8e-4]}


def test_a_sparse_ab_section_loads_and_saves_valid():
    from benchkit.core.records.records import AbRecord
    record = AbRecord.from_dict({"sides": {"base": {}, "new": {"env": {"A": "1"}}}})
    assert record.rounds is None and record.design == "interleaved"
    written = record.to_dict()
    assert "rounds" not in written and "python" not in written["sides"]["base"]
    assert AbRecord.from_dict(written) == record


@pytest.mark.parametrize("processes, problem", [
    ([], "measurements[0].processes: [] should be non-empty"),
    ([{"chunks": [2, 2], "probes": [1e-4, 1e-4]}, {"chunks": [2]}], "hold 6 blocks but"),
    ([{"chunks": [2, 0]}], "measurements[0].processes[0].chunks[1]: 0 is less than"),
    ([{"chunks": [3], "probes": [-1.0]}, {"chunks": [2]}],
     "measurements[0].processes[0].probes[0]: -1.0 is less than or equal to"),
    ([{"chunks": [3], "probes": [1.0, 2.0]}, {"chunks": [2]}], "2 probes for 1 chunks"),
    (["x"], "measurements[0].processes[0]: 'x' is not of type 'object'"),
])
def test_impossible_process_structure_is_refused(tmp_path, processes, problem):
    path = benchkit.save(tmp_path / "r.json", [_sampled()])
    doc = json.loads(path.read_text())
    doc["measurements"][0]["processes"] = processes
    path.write_text(json.dumps(doc))
    _expect_error(path, problem)


def test_version_2_files_are_migrated(tmp_path):
    doc = {"format": "benchkit-results", "version": 2, "environment": {},
           "measurements": [schema.measurement_to_dict(M1)], "callgrind": [], "extra": {}}
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(doc))
    loaded = benchkit.load(path)
    assert loaded.measurements == [M1] and loaded.ab is None
    assert loaded.measurements[0].processes is None


def test_recorded_packages_and_collector_revision_are_checked_on_load(tmp_path):
    from test_collector_revision import stats
    path = benchkit.save(tmp_path / "r.json", [stats("a", 100, "r1", site_packages="s1")])
    good = json.loads(path.read_text())
    assert isinstance(good["environment"]["site_packages"], list)
    doc = json.loads(path.read_text())
    doc["environment"]["site_packages"] = "ruff"
    path.write_text(json.dumps(doc))
    _expect_error(path, "environment.site_packages")
    doc = json.loads(json.dumps(good))
    doc["callgrind"][0]["metadata"]["controls"]["collector_revision"] = 5
    path.write_text(json.dumps(doc))
    _expect_error(path, "callgrind[0].metadata.controls.collector_revision")


def test_a_version_3_ab_file_migrates_and_saves_as_version_4(tmp_path):
    from benchkit.core.records.records import Side
    source = Path(__file__).parent / "fixtures" / "results" / "v3_ab.json"
    original = json.loads(source.read_text())
    assert original["version"] == 3 and "failures" not in original
    loaded = benchkit.load(source)
    assert loaded.failures == [] and loaded.partial is None
    assert loaded.ab.rounds == original["ab"]["rounds"] and loaded.ab.sides[Side.BASE].python
    saved = json.loads(benchkit.save(tmp_path / "v4.json", loaded).read_text())
    assert saved["version"] == schema.FORMAT_VERSION and saved["failures"] == [] and saved["partial"] is None
    for key in ("environment", "measurements", "callgrind", "extra", "ab"):
        assert saved[key] == original[key], key


def test_failures_and_partial_round_trip(tmp_path):
    from benchkit.core.records.records import Failure, FailureKind, Phase
    from benchkit.core.records.schema import Results
    failure = Failure("bench_x::bad", Phase.WALL_TIME, FailureKind.RAISED,
                      "stmt raised ZeroDivisionError: division by zero", "/s/bench_x.py")
    path = benchkit.save(tmp_path / "r.json", Results([M1], [], {"python": "x"},
                                                      failures=[failure],
                                                      partial="interrupted (SIGTERM)"))
    loaded = benchkit.load(path)
    assert loaded.failures == [failure] and loaded.partial == "interrupted (SIGTERM)"
    assert failure.summary() == ("bench_x::bad (/s/bench_x.py): raised in wall time: stmt "
                                 "raised ZeroDivisionError: division by zero")
    doc = json.loads(path.read_text())
    doc["failures"][0]["kind"] = "exploded"
    path.write_text(json.dumps(doc))
    _expect_error(path, "failures[0].kind: 'exploded' is not one of")
