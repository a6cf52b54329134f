"""The language: AST with spans, parser, API registry, checker and sandboxed interpreter."""
