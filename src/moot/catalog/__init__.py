"""The catalog: roles, teams, arbiters and scenarios as files a user reads, copies and edits.

Entries are looked up in the user's project first (``./roles`` ...), then in
each directory of ``$MOOT_PATH``, then in the built-ins the package ships
(``moot/catalog/builtin``, which links to the repository's top-level folders). This
package owns only finding and reading files; what an entry *means* belongs to
its kind's package (``moot.roles``, ``moot.arbiters``, ``moot.teams``,
``moot.scenario``).
"""

from moot.catalog._document import NAME_PATTERN, CatalogError, CatalogFile, Document, read_document
from moot.catalog._source import BUILT_IN, KINDS, PATH_VARIABLE, Entry, entries, find_entry, notice_override

__all__ = [
    "BUILT_IN",
    "KINDS",
    "NAME_PATTERN",
    "PATH_VARIABLE",
    "CatalogError",
    "CatalogFile",
    "Document",
    "Entry",
    "entries",
    "find_entry",
    "notice_override",
    "read_document",
]
