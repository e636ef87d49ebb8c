"""What a pytest run started by a test (pytester in process, or a subprocess) leaves out.

``UNUSED_PLUGINS``: the LangSmith and Hypothesis plugins, installed in the environment but used
by no run a test starts. Such a run in a temporary folder does not read the project's
``addopts`` (which leave LangSmith's plugin out too), and pytester drops the modules a run
imported, so each run imported both packages again: ~1.3 CPU s a run.
"""

from __future__ import annotations

UNUSED_PLUGINS = ("-p", "no:langsmith_plugin", "-p", "no:hypothesispytest")
