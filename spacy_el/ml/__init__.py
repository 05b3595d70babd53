"""Thinc-wrapped PyTorch models (torch modules apart from their Thinc glue) and their losses."""
