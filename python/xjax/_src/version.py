"""The package's version (xjax.__version__; .xjx files name their producer by it)."""
__version__ = "0.1.0"
