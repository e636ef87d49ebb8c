"""Analysis: reports turned into tidy DataFrames, comparisons and statistics (no rendering here)."""
