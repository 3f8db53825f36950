"""Tree -> Markdown, plain text (for `cite`) and JSON-ready dicts. Pure."""
