"""The documentation site builds offline from docs/ with no warning (mkdocs --strict), its
pages are all in the navigation, and the API reference comes from the docstrings. (Every
```python block of the README and the pages runs as its own test: pytest-markdown-docs.)"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_site_builds_with_no_warnings(tmp_path):
    pytest.importorskip("mkdocs", reason="mkdocs is in the test and docs extras")
    pytest.importorskip("mkdocstrings", reason="mkdocstrings is in the test and docs extras")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                           str(ROOT / "mkdocs.yml"), "-d", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING " not in done.stderr, done.stderr
    api = (tmp_path / "site" / "api" / "index.html").read_text()
    assert "blocked_autorange" in api and "collect_callgrind" in api
    tour = (tmp_path / "site" / "tour" / "index.html").read_text()
    assert "collect_callgrind" in tour


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    assert pages and all(page in nav for page in pages), pages


def test_the_readme_stays_short():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 150
