"""Populated by later issues; see the README for the layout."""
