"""Display: HTML cards, plotly figures, ipywidgets explorers and HTML export (no scoring here)."""
