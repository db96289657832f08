"""ctxtui: the command line and the Textual app around the engine."""

__version__ = "0.1.0"
