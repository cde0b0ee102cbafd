# Quickstart: `make demo` runs the seed-003 tour, `make test` runs the test suite.
# Both create .venv and install benchkit (with torch pinned by constraints.txt) when needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# pip would compile every installed module (35 s, mostly torch's); instead the install
# compiles none and one import compiles what benchkit's runs load (2 s), and the targets
# below write the caches of anything else they import, even where the environment says
# PYTHONDONTWRITEBYTECODE: without caches every child's `import torch` would take 2 s more.
unexport PYTHONDONTWRITEBYTECODE
WARM_UP := import torch, torch.profiler, numpy, scipy.stats, benchkit.cli, benchkit.api

.PHONY: demo test test-fast compat bench bench-history docs clean

$(VENV)/.installed: pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e '.[test,plot,torch]'
	$(PY) -c '$(WARM_UP)'
	touch $@

demo: $(VENV)/.installed
	$(PY) benchmarks/tour_seed003.py

# Two workers (pytest-xdist); an idle worker takes tests from the other's queue, so a
# few long end-to-end tests do not leave one core idle at the end.
test: $(VENV)/.installed
	$(PY) -m pytest -q -n 2 --dist worksteal

# The pure modules and quick CLI checks: everything not marked slow.
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q -n 2 --dist worksteal -m 'not slow and not compat'

# The determinism hard cases left out of `make test` (another install path, fresh
# virtualenvs), then the torch versions (several GB each from the index: name them).
compat: $(VENV)/.installed
	$(PY) -m pytest -q -m compat
	@echo "torch versions: $(PY) benchmarks/compat_torch.py 2.13.0 2.14.1 '2.1.2,numpy<2'"

bench: $(VENV)/.installed
	$(PY) -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(PY) benchmarks/perf_timer.py
	$(PY) benchmarks/perf_callgrind.py
	$(PY) benchmarks/perf_layouts.py
	$(PY) benchmarks/perf_collector.py
	$(PY) benchmarks/perf_cpp.py
	$(PY) benchmarks/perf_trace_memory.py
	$(PY) benchmarks/perf_profile.py -o results/perf_profile.json
	$(PY) benchmarks/perf_decisions.py
	$(PY) benchmarks/replay_sequential.py
	$(PY) benchmarks/perf_memory.py
	$(PY) benchmarks/perf_scaling.py

# History on real data: astropy's real asv results (asv's own test data, from its source
# archive on the package index), three 200-commit noise histories, numpy's and xarray's
# suites on their releases, recorded on this machine, then step detection and scale beside
# asv (figures in results/, the README and docs/performance.md).
HISTORY_DATA := .bench-data
# the machine the histories were recorded on names the figures' files (the README quotes
# the fifth VM's; on another machine: make bench-history HISTORY_VM=sixth_vm)
HISTORY_VM ?= fifth_vm
NUMPY_BENCHMARKS = bench_core.Core or bench_core.Temporaries or bench_core.PackBits
XARRAY_BENCHMARKS = (merge. or renaming. or reindexing.Reindex. or repr. or unstacking.Unstacking.) and time_
SCIPY_BENCHMARKS = (special. or cluster. or cluster_hierarchy_disjoint_set. or signal_filtering.Lfilter or signal_filtering.Sosfilt) and time_
bench-history: $(VENV)/.installed
	$(PY) -m pip install --quiet -c constraints.txt -e '.[bench]'
	mkdir -p $(HISTORY_DATA)
	test -d $(HISTORY_DATA)/astropy-cheetah || ( cd $(HISTORY_DATA) && \
		$(abspath $(PY)) -m pip download --quiet --no-deps --no-binary :all: asv==0.6.6 -d . && \
		tar xzf asv-0.6.6.tar.gz asv-0.6.6/test/example_results && \
		mv asv-0.6.6/test/example_results astropy-cheetah && rm -rf asv-0.6.6 )
	$(PY) benchmarks/record_noise_history.py $(HISTORY_DATA)/noise-vm --commits 200
	# the same beside a busy neighbour (a shared runner's spells), and a third time
	$(PY) benchmarks/record_noise_history.py $(HISTORY_DATA)/noise-busy --commits 200 \
		--busy-neighbour 1
	$(PY) benchmarks/record_noise_history.py $(HISTORY_DATA)/noise-vm3 --commits 200
	# numpy's own asv suite (each release's, from its source archive) on every numpy release
	# since 1.24 (about 40 min): a second project's real history, recorded on this machine
	test -x $(HISTORY_DATA)/numpy-venv/bin/python || ( $(PYTHON) -m venv $(HISTORY_DATA)/numpy-venv && \
		$(HISTORY_DATA)/numpy-venv/bin/pip install --quiet -e . asv_runner 'scipy==1.15.3' 'numpy==1.24.0' )
	$(PY) benchmarks/record_release_history.py $(HISTORY_DATA)/numpy-releases --package numpy \
		--suite-in-sdist benchmarks/benchmarks --python $(HISTORY_DATA)/numpy-venv/bin/python \
		-k "$(NUMPY_BENCHMARKS)" --since 1.24.0 --machine vm-numpy
	# xarray's own asv suite (its 2025.1.2 source archive's) on every xarray release since
	# 2024.6.0, numpy and pandas held fixed (about 30 min)
	test -x $(HISTORY_DATA)/xarray-venv/bin/python || ( $(PYTHON) -m venv $(HISTORY_DATA)/xarray-venv && \
		$(HISTORY_DATA)/xarray-venv/bin/pip install --quiet -e . asv_runner 'numpy==1.26.4' \
		'pandas==2.2.3' 'xarray==2024.6.0' )
	test -d $(HISTORY_DATA)/sdists/xarray-2025.1.2 || ( mkdir -p $(HISTORY_DATA)/sdists && \
		cd $(HISTORY_DATA)/sdists && $(abspath $(PY)) -m pip download --quiet --no-deps \
		--no-binary :all: xarray==2025.1.2 -d . && tar xzf xarray-2025.1.2.tar.gz )
	$(PY) benchmarks/record_release_history.py $(HISTORY_DATA)/xarray-releases --package xarray \
		--suite $(HISTORY_DATA)/sdists/xarray-2025.1.2/asv_bench/benchmarks \
		--python $(HISTORY_DATA)/xarray-venv/bin/python --processes 3 --since 2024.6.0 \
		-k "$(XARRAY_BENCHMARKS)" --machine vm-xarray
	# held out: scipy's suite (its 1.15.3 source archive's) on every scipy release since 1.9.2,
	# numpy held fixed (about 40 min); scored once, after the method's constants were chosen
	test -x $(HISTORY_DATA)/scipy-venv/bin/python || ( $(PYTHON) -m venv $(HISTORY_DATA)/scipy-venv && \
		$(HISTORY_DATA)/scipy-venv/bin/pip install --quiet -e . asv_runner 'numpy==1.26.4' && \
		$(HISTORY_DATA)/scipy-venv/bin/pip install --quiet --no-deps 'scipy==1.9.2' )
	$(PY) benchmarks/record_release_history.py $(HISTORY_DATA)/scipy-releases --package scipy \
		--suite-in-sdist benchmarks/benchmarks --suite-from 1.15.3 \
		--python $(HISTORY_DATA)/scipy-venv/bin/python --processes 3 --timeout 30 --since 1.9.2 \
		-k "$(SCIPY_BENCHMARKS)" --machine vm-scipy
	# ... and again, into another directory: which real steps come back in a second recording
	$(PY) benchmarks/record_release_history.py $(HISTORY_DATA)/scipy-releases-2 --package scipy \
		--suite-in-sdist benchmarks/benchmarks --suite-from 1.15.3 \
		--python $(HISTORY_DATA)/scipy-venv/bin/python --processes 3 --timeout 30 --since 1.9.2 \
		-k "$(SCIPY_BENCHMARKS)" --machine vm-scipy
	$(PY) benchmarks/perf_history_replication.py $(HISTORY_DATA)/scipy-releases \
		$(HISTORY_DATA)/scipy-releases-2 --min-points 20 -o results/history_replication_scipy.json
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/scipy-releases --min-points 20 \
		--trials 400 -o results/history_detection_scipy_releases.json
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/scipy-releases --min-points 20 \
		--every-position -o results/history_detection_every_position_scipy_releases.json
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/scipy-releases-2 --min-points 20 \
		--every-position -o results/history_detection_every_position_scipy_releases_2.json
	# all six side by side, in one run: real steps (and the noise's level shifts) taken out
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/astropy-cheetah \
		$(HISTORY_DATA)/numpy-releases $(HISTORY_DATA)/xarray-releases $(HISTORY_DATA)/noise-vm \
		$(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy --trials 400 \
		-o results/history_detection_$(HISTORY_VM).json
	# the noise histories as recorded, then a step put in at every commit of every series
	$(PY) benchmarks/perf_history_detection.py --no-steps $(HISTORY_DATA)/noise-vm \
		$(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy --trials 400 \
		-o results/history_detection_$(HISTORY_VM)_as_recorded.json
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/astropy-cheetah \
		$(HISTORY_DATA)/numpy-releases $(HISTORY_DATA)/xarray-releases --no-steps \
		$(HISTORY_DATA)/noise-vm $(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy \
		--every-position -o results/history_detection_every_position_$(HISTORY_VM).json
	# every night of the noise histories judged as the history stood then (false alerts)
	$(PY) benchmarks/perf_history_nightly.py $(HISTORY_DATA)/noise-busy $(HISTORY_DATA)/noise-vm \
		$(HISTORY_DATA)/noise-vm3 --first 60 -o results/history_nightly_$(HISTORY_VM).json
	$(PY) benchmarks/perf_history_nightly.py $(HISTORY_DATA)/astropy-cheetah --first 20 \
		-o results/history_nightly_astropy.json
	# years of CI runs in one series: the three noise histories end to end, in three orders
	$(PY) benchmarks/perf_history_detection.py --trials 400 \
		--join $(HISTORY_DATA)/noise-vm $(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy \
		--join $(HISTORY_DATA)/noise-busy $(HISTORY_DATA)/noise-vm $(HISTORY_DATA)/noise-vm3 \
		--join $(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy $(HISTORY_DATA)/noise-vm \
		-o results/history_detection_joined_$(HISTORY_VM).json
	$(PY) benchmarks/perf_history_detection.py --every-position \
		--join $(HISTORY_DATA)/noise-vm $(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy \
		-o results/history_detection_every_position_joined_$(HISTORY_VM).json
	# a quiet machine's noise, independent from commit to commit (drawn: none recorded has it)
	$(PY) benchmarks/perf_history_detection.py --independent 50 200 0.05 \
		--independent 50 200 0.02 --independent 10 1000 0.05 --trials 400 --seed 1 2 3 \
		-o results/history_detection_independent.json
	# ... and how well a step is placed there, by the likelihood of each cut (a few seconds)
	$(PY) benchmarks/perf_history_placement.py -o results/history_placement.json
	# E-divisive means (signal-processing-algorithms, as Otava and MongoDB's CI use it) beside
	# both, in an environment of its own (the package pins numpy below 2)
	test -x $(HISTORY_DATA)/edivisive-venv/bin/python || ( $(PYTHON) -m venv $(HISTORY_DATA)/edivisive-venv && \
		$(HISTORY_DATA)/edivisive-venv/bin/pip install --quiet signal-processing-algorithms==2.1.6 )
	$(PY) benchmarks/perf_history_detection.py $(HISTORY_DATA)/astropy-cheetah \
		$(HISTORY_DATA)/numpy-releases $(HISTORY_DATA)/xarray-releases --no-steps \
		$(HISTORY_DATA)/noise-vm $(HISTORY_DATA)/noise-vm3 $(HISTORY_DATA)/noise-busy --trials 400 \
		--e-divisive $(HISTORY_DATA)/edivisive-venv/bin/python --e-divisive-p 0.05 0.01 \
		-o results/history_detection_e_divisive.json
	$(PY) benchmarks/perf_history_detection.py --independent 50 200 0.05 \
		--independent 50 200 0.02 --trials 400 --e-divisive \
		$(HISTORY_DATA)/edivisive-venv/bin/python --e-divisive-p 0.05 0.01 \
		-o results/history_detection_e_divisive_independent.json
	$(PY) benchmarks/perf_history_scale.py $(HISTORY_DATA)/noise-vm --machines 25 --rounds 3 \
		-o results/history_scale.json
	$(PY) benchmarks/perf_history_scale.py $(HISTORY_DATA)/noise-vm --machines 1 --commits 5000 \
		--rounds 3 -o results/history_scale_long.json
	$(PY) benchmarks/perf_history_scale.py $(HISTORY_DATA)/noise-vm --machines 1 --commits 5000 \
		--no-grid --rounds 3 -o results/history_scale_small_suite.json

# The documentation site, built offline into site/ (warnings are errors).
docs: $(VENV)/.installed
	$(PY) -m pip install --quiet -c constraints.txt -e '.[docs]'
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis site
