"""The one terminal console of glotbench's output (rich, markup off, control characters shown as
`\\xNN`), below everything that prints: the engine's progress lines and the report's tables both
take it from here, so the engine prints nothing through `report/`."""

from __future__ import annotations

import re
from typing import Any

# C0 and C1 control characters but tab and newline: ESC in a category name or a model's spec would
# reach the terminal as an escape sequence (recolouring, moving the cursor over the numbers).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_CONSOLE: Any = None


def visible(text: str) -> str:
    """`text` with its control characters (but tab and newline) written as `\\xNN`."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def console(**kw: Any) -> Any:
    """The one rich Console of glotbench's terminal output. Everything it prints holds user text
    (model specs, group and category names, judge names, paths), so rich's markup and emoji codes
    are off: a category named `[/x]` would otherwise stop the table with a MarkupError, and
    `[red]` or `:fire:` in a name would restyle or rewrite it; control characters are printed as
    `\\xNN`. Styles are given as arguments."""
    global _CONSOLE
    if _CONSOLE is None:
        from rich.console import Console

        class TextConsole(Console):
            def render_str(self, text: str, **options: Any) -> Any:  # every str it prints: cells, titles, lines
                return super().render_str(visible(text), **options)

        _CONSOLE = TextConsole
    return _CONSOLE(markup=False, emoji=False, **kw)
