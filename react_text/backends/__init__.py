"""Model backends: one small module each, all implementing `react_text.types.Model`."""
