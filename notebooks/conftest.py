"""nbval runs of these notebooks fail loudly: a failing ``!`` line or an error printed as text
fails its cell (``heta_notebook.testing._notebook_guard``)."""

from heta_notebook.testing._notebook_guard import pytest_collection_modifyitems

__all__ = ["pytest_collection_modifyitems"]
