"""Stand-in that hides ``rfc3987_syntax`` from the processes the tests start.

``jsonschema`` (imported through nbformat by pytest's nbval plugin, every notebook kernel,
JupyterLab, and by every Ray agent and worker) builds that package's Earley parser at import:
~1 CPU s each on a quiet 2-core box, 9 s on a loaded one, where Ray 2.60's raylet waits only
15 s (hard-coded) for its agents' port files, then aborts. ``jsonschema`` treats the
ImportError as "no IRI format checker"; nothing the tests run checks an IRI format.
``tasks.py`` (``offline_env``) puts this folder first on the test command's ``PYTHONPATH``;
``tests/_ray_helpers.py`` does so for Ray's processes.
"""

raise ImportError("rfc3987_syntax is hidden from the test command's processes")
