"""The package's version (a leaf module: the cache's manifest records it without importing the
package)."""

__version__ = "0.1.0"
