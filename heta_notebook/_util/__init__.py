"""Helpers every layer may use, importing nothing else of ours: safe paths and atomic writes
(``paths``), the one loop helper (``loop``), timeouts, GC pauses, redaction, the HTTP chat
client (``chat``) and its reply cache (``chat_cache``), number formatting (``formatting``) and
lazy package exports (``lazy``) and JSON-safe copies (``jsondata``). Private: import these from
inside the package only."""
