"""Optional integrations with other packages (heta-framework), imported lazily."""
