"""The one error type every reader raises on malformed input."""

from __future__ import annotations


class FormatError(ValueError):
    """A file (or byte string) that does not follow its format.

    The message names the file, the section and what is wrong, so a user can tell a truncated
    download from a wrong curve from a file of another kind.
    """

    def __init__(self, source: object, what: str, section: str | None = None) -> None:
        where = f"{source}" + (f" [{section}]" if section else "")
        super().__init__(f"{where}: {what}")
        self.source = source
        self.section = section
        self.what = what
