"""Every ```python block in README.md and docs/ runs as a test item.

pytest-markdown-docs's own ``--markdown-docs`` switch also imports every ``.py`` file it
collects to read its docstrings, fixture programs under tests/ included; benchkit's
docstrings are not examples, so only the Markdown files are handed to its collector.
"""

import pytest
from pytest_markdown_docs.plugin import MarkdownInlinePythonItem, MarkdownTextFile


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and not parent.config.option.markdowndocs:
        return MarkdownTextFile.from_parent(parent, path=file_path)
    return None


_warm = []   # the open callgrind_session() while Markdown blocks run


@pytest.fixture(autouse=True)
def _markdown_blocks_share_warm_collectors(request):
    # The blocks count the same from a warm collector (tested in tests/); sharing one spares
    # every block valgrind's start and `import torch` under it.
    if isinstance(request.node, MarkdownInlinePythonItem) and not _warm:
        import benchkit
        _warm.append(benchkit.callgrind_session())
        _warm[0].__enter__()
    yield


def pytest_runtest_teardown(item, nextitem):
    # Closed after the last block of a run of blocks: tests/ start with no session active.
    if _warm and not isinstance(nextitem, MarkdownInlinePythonItem):
        _warm.pop().__exit__(None, None, None)


def pytest_collection_modifyitems(config, items):
    # The docs' blocks are the tour: real measurements, callgrind, torch. `make test` runs
    # them; `make test-fast` (-m 'not slow') leaves them out, README's quick blocks stay.
    for item in items:
        if isinstance(item, MarkdownInlinePythonItem) and item.path.parent.name == "docs":
            item.add_marker(pytest.mark.slow)
