"""mkdocs hooks (mkdocs.yml `hooks:`): each notebook's page opens with a link to download it and
the command that runs it, above the outputs it ran with; the layout page gets the import graph,
drawn from the source at every build (scripts/import_graph.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# beside this file: mkdocs loads a hook by its path, not as a package
sys.path.insert(0, str(Path(__file__).resolve().parent))
import import_graph

RUN = (
    '<div class="admonition tip"><p class="admonition-title">Run this notebook</p>'
    '<p><a href="{url}" download>Download {name}</a>, or from a checkout: '
    '<code>pip install -e ".[local,server,notebooks,mcp]"</code> then '
    "<code>jupyter lab notebooks/{name}</code> (no key, no network). "
    "What is shown below is its last run.</p></div>\n"
)


def on_page_content(html: str, page: Any, **_: Any) -> str:
    if not getattr(page, "nb_url", None):  # set by mkdocs-jupyter on the pages it made from notebooks
        return html
    name = page.file.src_uri.rsplit("/", 1)[-1]
    return RUN.format(url=name, name=name) + html  # the .ipynb is copied beside the page


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if page.file.src_uri != "reference/layout.md":
        return markdown
    return import_graph.drawn_page(markdown)
