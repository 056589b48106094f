"""Holds the write lock of an SQLite database, as another writer or a backup tool would, until
SIGTERM or SIGINT: every writer of the database then meets SQLITE_BUSY (after its busy timeout).
Prints `locked` once the lock is held. Standard library only.

  python3 Tests/Faults/sqlite_lock.py STATE_DIR/trellis.sqlite
"""
import signal
import sqlite3
import sys
import threading

released = threading.Event()
for number in (signal.SIGTERM, signal.SIGINT):
    signal.signal(number, lambda *_: released.set())

connection = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
connection.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
while not released.wait(0.1):
    pass
connection.execute("ROLLBACK")
connection.close()
print("released", flush=True)
