"""Export of jitted functions to the .xjx file format, and loading them back (see xjax.export)."""
