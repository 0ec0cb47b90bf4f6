"""The bounded LRU mapping behind the compile caches: order, limits, counters."""
import pytest

from xjax._src.lru_cache import LRUCache


def test_evicts_least_recently_used():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    assert c.get("a") == 1  # a is now the newest
    c.put("c", 3)
    assert "b" not in c and c.get("a") == 1 and c.get("c") == 3
    assert c.info() == {"size": 2, "maxsize": 2, "hits": 3, "misses": 0, "evictions": 1}
    assert c.get("b") is None and c.misses == 1


def test_resize_drops_oldest_and_rejects_zero():
    c = LRUCache(4)
    for k in "abcd":
        c.put(k, k)
    c.resize(2)
    assert len(c) == 2 and "c" in c and "d" in c and c.evictions == 2
    with pytest.raises(ValueError, match="at least 1"):
        c.resize(0)
    c.clear()
    assert len(c) == 0


def test_put_again_refreshes():
    c = LRUCache(2)
    c.put("a", 1)
    c.put("b", 2)
    c.put("a", 10)
    c.put("c", 3)
    assert c.get("a") == 10 and "b" not in c


def test_full_cache_drops_least_recently_used_eighth():
    c = LRUCache(16)
    for k in range(16):
        c.put(k, k)
    for k in range(8):
        c.get(k)  # 0..7 now newer than 8..15
    c.put("new", 1)
    assert sorted(k for k in range(16) if k not in c) == [8, 9] and len(c) == 15 and c.evictions == 2
