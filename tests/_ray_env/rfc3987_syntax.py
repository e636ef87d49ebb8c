"""Stand-in that hides ``rfc3987_syntax`` from the Ray processes the tests start.

``jsonschema`` (imported by every Ray agent and worker) builds that package's Earley parser
at import: 9 s on a loaded 2-core box, and Ray 2.60's raylet waits only 15 s (hard-coded)
for its agents' port files, then aborts. ``jsonschema`` treats the ImportError as "no IRI
format checker", which Ray never uses.
"""

raise ImportError("rfc3987_syntax is hidden from Ray's processes in these tests")
