"""Errors shared by the front-ends, kept low so that no front-end imports another to raise one."""

from __future__ import annotations


class UsageFailure(Exception):
    """Bad usage found after parsing: the command line exits with code 2."""
