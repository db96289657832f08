"""Tests of the Textual app: Pilot, SVG snapshots, clipboard round trips."""
