"""A bounded least-recently-used mapping with counters, for the compile caches.

Compiled executables hold memory (graphs, buffers plans, registered callbacks): a program that
keeps making new shapes or new jaxprs must not grow a cache without bound.
"""
import collections


class LRUCache:
    """A dict of at most `maxsize` entries; a hit makes its entry the newest, an insert past
    the limit drops the oldest. Counts hits, misses and evictions (see `info`)."""

    __slots__ = ("_data", "maxsize", "hits", "misses", "evictions")

    def __init__(self, maxsize):
        self._data = collections.OrderedDict()
        self.maxsize = int(maxsize)
        self.hits = self.misses = self.evictions = 0

    def get(self, key):
        """The value under key (now the newest entry), or None."""
        data = self._data
        value = data.get(key)
        if value is None:
            self.misses += 1
            return None
        self.hits += 1
        try:
            data.move_to_end(key)
        except KeyError:  # dropped meanwhile by another thread: the value is still good
            pass
        return value

    def put(self, key, value):
        data = self._data
        data[key] = value
        data.move_to_end(key)
        while len(data) > self.maxsize:
            try:
                data.popitem(last=False)
            except KeyError:
                break
            self.evictions += 1

    def resize(self, maxsize):
        """Sets the limit (at least 1), dropping the oldest entries past it."""
        if int(maxsize) < 1:
            raise ValueError(f"cache size must be at least 1, got {maxsize}")
        self.maxsize = int(maxsize)
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)
            self.evictions += 1

    def clear(self):
        self._data.clear()

    def __len__(self):
        return len(self._data)

    def __contains__(self, key):
        return key in self._data

    def info(self):
        """{size, maxsize, hits, misses, evictions}."""
        return {"size": len(self._data), "maxsize": self.maxsize, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}
