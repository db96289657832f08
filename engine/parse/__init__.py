"""Parsing with tree-sitter: declarations, imports and heading sections of source files."""
