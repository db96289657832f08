"""`python -m ctxtui` runs the command line."""

from ctxtui.cli import main_entry

main_entry()
