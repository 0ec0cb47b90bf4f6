"""A bounded least-recently-used mapping with counters, for the compile caches.

Compiled executables hold memory (graphs, buffer plans, registered callbacks): a program that
keeps making new shapes or new jaxprs must not grow a cache without bound.

A hit must stay cheap (eager dispatch looks up every op): entries are [value, last use] in a
plain dict, and a hit only stamps the entry with the clock. Eviction, when an insert finds the
cache full, drops the least recently used eighth at once.
"""
import itertools


class LRUCache:
    """A dict of at most `maxsize` entries, dropping the least recently used ones first. Counts
    hits, misses and evictions (see `info`); hot paths may read `data` and stamp `clock` themselves."""

    __slots__ = ("data", "clock", "maxsize", "hits", "misses", "evictions")

    def __init__(self, maxsize):
        self.data = {}  # key -> [value, last use]
        self.clock = itertools.count().__next__
        self.maxsize = int(maxsize)
        self.hits = self.misses = self.evictions = 0

    def get(self, key):
        """The value under key (now the most recently used), or None."""
        entry = self.data.get(key)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        entry[1] = self.clock()
        return entry[0]

    def put(self, key, value):
        data = self.data
        if key not in data and len(data) >= self.maxsize:
            self._evict(len(data) - self.maxsize + max(1, self.maxsize // 8))
        data[key] = [value, self.clock()]

    def _evict(self, n):
        items = list(self.data.items())  # (a snapshot: other threads may insert meanwhile)
        oldest = sorted(items, key=lambda kv: kv[1][1])[:n]
        for k, _ in oldest:
            self.data.pop(k, None)  # (another thread may have dropped it)
        self.evictions += len(oldest)

    def resize(self, maxsize):
        """Sets the limit (at least 1), dropping the least recently used entries past it."""
        if int(maxsize) < 1:
            raise ValueError(f"cache size must be at least 1, got {maxsize}")
        self.maxsize = int(maxsize)
        if len(self.data) > self.maxsize:
            self._evict(len(self.data) - self.maxsize)

    def clear(self):
        self.data.clear()

    def __len__(self):
        return len(self.data)

    def __contains__(self, key):
        return key in self.data

    def info(self):
        """{size, maxsize, hits, misses, evictions}."""
        return {"size": len(self.data), "maxsize": self.maxsize, "hits": self.hits, "misses": self.misses,
                "evictions": self.evictions}
