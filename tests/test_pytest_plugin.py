import benchkit


def test_fixture_measures_and_saves(pytester):
    pytester.makepyfile(test_speed="""
        def test_sum(benchkit):
            m = benchkit("sum(range(100))", min_run_time=0.05)
            assert m.median > 0 and m.label.endswith("test_sum")

        def test_plain():
            assert True
    """)
    out = pytester.runpytest_subprocess("--benchkit-save", "speed.json", "-p", "no:cacheprovider")
    out.assert_outcomes(passed=2)
    out.stdout.fnmatch_lines(["*benchkit*", "*Times are in*"])
    results = benchkit.load(pytester.path / "speed.json")
    assert [m.stmt for m in results.measurements] == ["sum(range(100))"]


def test_plugin_stays_silent_and_imports_nothing_when_unused(pytester):
    pytester.makepyfile(test_plain="""
        import sys
        def test_nothing_loaded():
            assert "benchkit.timing.timer" not in sys.modules
            assert "numpy" not in sys.modules
    """)
    out = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    out.assert_outcomes(passed=1)
    assert "benchkit" not in out.stdout.str().lower().replace("plugins: benchkit", "")
