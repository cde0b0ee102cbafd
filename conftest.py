"""Every ```python block in README.md and docs/ runs as a test item.

pytest-markdown-docs's own ``--markdown-docs`` switch also imports every ``.py`` file it
collects to read its docstrings, fixture programs under tests/ included; benchkit's
docstrings are not examples, so only the Markdown files are handed to its collector.
"""

from pytest_markdown_docs.plugin import MarkdownTextFile


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".md" and not parent.config.option.markdowndocs:
        return MarkdownTextFile.from_parent(parent, path=file_path)
    return None
