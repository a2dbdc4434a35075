"""The SQLite store: the single source of truth (DESIGN.md invariant 1), and the one home of its SQL.

`core` holds the connection (`Store`: open, migrate, `atomic`) and the memories, embeddings, edges and cursors;
`schema` the tables and their migrations; `fts_structure` the full-text index's structure. Every statement on the
store's tables lives in this package; the rest of twin calls the named functions here.
"""

from twin.store.core import BUSY_TIMEOUT_MS, RankingFields, RankingRow, Store, private_dir, secure_dir
from twin.store.ids import IN_CHUNK, id_chunks

__all__ = ["BUSY_TIMEOUT_MS", "IN_CHUNK", "RankingFields", "RankingRow", "Store", "id_chunks", "private_dir",
           "secure_dir"]
